import { Argument, Command, CommanderError } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { PodplateConnectionError, PodplateProblem } from '../client/index.ts';
import { FileError } from '../private-files.ts';
import { accountCommands } from './accounts.ts';
import { UsageError } from './command.ts';
import { completionScript, SHELLS, type Shell } from './completion.ts';
import { LoginError } from './config.ts';
import { endpointCommands, releaseCommands, WatchError } from './endpoints.ts';
import { loginCommands } from './login.ts';
import { note, problemText, terminalWidth } from './output.ts';
import { registryAuthCommands } from './registry-auths.ts';
import { ADMIN_SECRETS, secretCommands } from './secrets.ts';
import { templateCommands } from './templates.ts';

// The podplate command, parsed by commander. The client commands use only the client; the admin commands are
// handed their arguments untouched and load the server's code only when run (admin.ts), so the client commands
// start without Fastify or database drivers.

const ADMIN: Record<string, string> = {
  serve: 'Serve the API (as npm start does)',
  migrate:
    'Bring the database schema up to date (a SQLite file is backed up first); --status lists applied and pending migrations, --dry-run says what would run',
  keys: 'keys create --user <name> [--role platform] (prints the key alone on stdout) | keys list | keys revoke <key-id>; on the database (over the API: podplate accounts keys)',
  export: 'export [--output FILE]: write the whole install as NDJSON (stdout by default), while it serves',
  import: 'import [--input FILE]: read an export (stdin by default) into an empty database',
  backup: 'backup FILE: copy a SQLite install to FILE while it serves (PostgreSQL: pg_dump)',
};
type AdminCommand = 'serve' | 'migrate' | 'keys' | 'secrets' | 'export' | 'import' | 'backup';

/** Whether argv names an admin command: one of ADMIN, or `secrets rotate|new-key` (other secrets commands are a client's). */
const isAdmin = (first: string | undefined, next: string | undefined): boolean =>
  first !== undefined && (Object.hasOwn(ADMIN, first) || (first === 'secrets' && next !== undefined && ADMIN_SECRETS.includes(next)));

const FOOTER = `
Output: -o table|wide|json|yaml on every command that prints a resource; lists also take -q (ids only) and
--no-headers. Tables fit the terminal (COLUMNS, else its width, else 80); -o wide shows every column in full.
Deletes ask first on a terminal, and need --yes otherwise. ETags may be given bare: --if-match r3.
Exit codes: 0 success, 1 API, network or release failure, 2 usage error.

Admin commands use the database directly (DATABASE_URL, default sqlite:./data/podplate.db).

Examples:
  podplate keys create --user alice
  podplate login --url http://127.0.0.1:8080
  podplate templates ls -o wide
  podplate templates update 5x2k9d0v7m3qh8wz --image "$IMAGE" -e DEBUG=1 --unset-env OLD
  podplate completion bash >> ~/.bashrc
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/podplate podplate migrate
`;

/** The whole command tree; `main` parses with it, and `completion` writes scripts from it. */
export function program(): Command {
  const root = new Command('podplate')
    .description('The Podplate command: templates, endpoints and releases of a Podplate service, and its administration.')
    .version(pkg.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      getOutHelpWidth: () => terminalWidth(),
      getErrHelpWidth: () => terminalWidth(),
      // One line for the error and its suggestion, one for where the usage is.
      outputError: (text, write) =>
        write(
          text.replace(/^error: /, 'podplate: ').replace(/\n\((Did you mean [^)]*)\)/, (_m, s: string) => ` (${s.replace('Did', 'did')})`),
        ),
    })
    .addHelpText('after', FOOTER);

  loginCommands(root);
  templateCommands(root);
  endpointCommands(root);
  releaseCommands(root);
  registryAuthCommands(root);
  secretCommands(root);
  accountCommands(root);
  root
    .command('completion')
    .description('Print a completion script: bash, zsh or fish.')
    // The shells are listed for completion scripts; the action checks them, with its own message.
    .addArgument(Object.assign(new Argument('<shell>', 'the shell'), { argChoices: [...SHELLS] }))
    .addHelpText(
      'after',
      '\nExamples:\n  source <(podplate completion bash)\n  podplate completion zsh > ~/.zfunc/_podplate\n  podplate completion fish > ~/.config/fish/completions/podplate.fish\n',
    )
    .action((shell: string) => {
      if (!(SHELLS as readonly string[]).includes(shell))
        throw new UsageError(`completion is for ${SHELLS.join(', ')}, not ${JSON.stringify(shell)}`);
      process.stdout.write(completionScript(root, shell as Shell));
    });
  // Listed for --help, suggestions and completion; run by admin.ts with their arguments as given.
  for (const [name, description] of Object.entries(ADMIN)) root.command(name).description(`${description} [admin]`).helpOption(false);

  // Every usage error ends with where to read more, on one line.
  const hint = (command: Command, path: string[]) => {
    command.showHelpAfterError(`(podplate ${path.join(' ')}${path.length > 0 ? ' ' : ''}--help shows the usage)`);
    for (const sub of command.commands) hint(sub, [...path, sub.name()]);
  };
  hint(root, []);
  return root;
}

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (isAdmin(first, rest[0])) {
    if (rest.includes('--help') || rest.includes('-h')) {
      const described = ADMIN[first as string] ?? 'secrets rotate (seal every secret again under SECRETS_KEY) | secrets new-key';
      process.stdout.write(`podplate ${described.startsWith(first as string) ? described : `${first}: ${described}`}\n`);
      return 0;
    }
    try {
      return await (await import('./admin.ts')).admin(first as AdminCommand, rest);
    } catch (error) {
      // node:util's parseArgs refuses an unknown flag or a missing value: a usage error like any other.
      const parseArgs = (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      if (error instanceof UsageError || parseArgs) {
        note(`podplate: ${(error as Error).message}\n(podplate --help lists the admin commands)`);
        return 2;
      }
      throw error;
    }
  }
  // `podplate templates list | head` stops reading early: not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
  const root = program();
  let current: Command = root;
  root.hook('preAction', (_root, action) => {
    current = action;
  });
  try {
    if (argv.length === 0) {
      root.outputHelp({ error: true });
      return 2;
    }
    await root.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') {
        return error.code === 'commander.help' ? 2 : 0;
      }
      return 2;
    }
    if (error instanceof UsageError) {
      const path: string[] = [];
      for (let c: Command | null = current; c && c !== root; c = c.parent) path.unshift(c.name());
      note(`podplate: ${error.message}\n(podplate ${path.join(' ')}${path.length > 0 ? ' ' : ''}--help shows the usage)`);
      return 2;
    }
    if (error instanceof PodplateProblem) {
      note(problemText(error));
      return 1;
    }
    if (
      error instanceof LoginError ||
      error instanceof WatchError ||
      error instanceof PodplateConnectionError ||
      error instanceof FileError
    ) {
      note(`podplate: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
