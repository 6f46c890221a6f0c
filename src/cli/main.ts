import { PodplateConnectionError, PodplateProblem } from '../client/index.ts';
import { type CommandSpec, UsageError } from './args.ts';
import { LoginError } from './config.ts';
import { endpointCommands, releaseCommands, WatchError } from './endpoints.ts';
import { login, logout } from './login.ts';
import { note, problemText } from './output.ts';
import { registryAuthCommands } from './registry-auths.ts';
import { secretCommands } from './secrets.ts';
import { templateCommands } from './templates.ts';

const USAGE = `Usage: podplate <command> [flags]

Client commands (talk to a Podplate service; --help on each shows its flags and an example):
  login --url <url> --api-key <key>       Check the key and save both (PODPLATE_URL / PODPLATE_API_KEY override)
  logout                                  Forget the saved URL and key
  templates list [--public] [--platform] [--bound] [--category X] [--search q] [--all]
  templates get <id>
  templates create --name N --image I [--env K=V]… [--port 8888/http]… [-f template.yaml]
  templates update <id> [field flags] [--if-match <etag>]
  templates delete <id>
  templates revisions <id>
  templates rollback <id> <revision>
  endpoints list | get <id> | create --name N --template T | delete <id>
  releases list <endpoint-id>
  releases watch <endpoint-id> | --template <id> [--revision n]
                                          Wait for a release; exit 1 unless it completes
  registry-auth create --name N --username U --password-stdin
                                          Store private-registry credentials (templates use them: --registry-auth <id>)
  registry-auth list | delete <id>
  secrets set <NAME> --value-stdin        Store a secret of yours; templates refer to it as {{ secret.NAME }}
  secrets list | delete <NAME>

  --json prints the API's JSON. Exit codes: 0 success, 1 API, network or release failure, 2 usage error.

Admin commands (use the database directly; read DATABASE_URL, default sqlite:./data/podplate.db):
  serve                                   Serve the API (as npm start does)
  migrate                                 Bring the database schema up to date
  keys create --user <name> [--role platform]
                                          Create an API key; prints the key alone on stdout
  keys list                               List API keys (never their secret)
  keys revoke <key-id>                    Revoke a key
  secrets new-key                         Print a new random key for SECRETS_KEY
  secrets rotate                          Encrypt every stored secret again under SECRETS_KEY (the old key in
                                          SECRETS_KEY_PREVIOUS)
  export [--output FILE]                  Write the whole install as NDJSON (stdout by default), while it serves
  import [--input FILE]                   Read an export (stdin by default) into an empty database
  backup FILE                             Copy a SQLite install to FILE while it serves (PostgreSQL: pg_dump)

Examples:
  podplate keys create --user alice
  podplate login --url http://127.0.0.1:8080 --api-key "$(podplate keys create --user alice)"
  podplate templates update 5x2k9d0v7m3qh8wz --image "$IMAGE" --json
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/podplate podplate migrate
  podplate export | DATABASE_URL=postgres://postgres@127.0.0.1:5432/podplate podplate import
`;

type Group = Record<string, { spec: CommandSpec<any>; run: (argv: string[]) => Promise<number> }>;
const GROUPS: Record<string, Group> = {
  templates: templateCommands,
  endpoints: endpointCommands,
  releases: releaseCommands,
  'registry-auth': registryAuthCommands,
  secrets: secretCommands,
};

function groupUsage(name: string, group: Group): string {
  const width = Math.max(...Object.keys(group).map((k) => k.length));
  const lines = Object.entries(group).map(
    ([sub, { spec }]) => `  ${sub.padEnd(width)}  ${spec.summary.split('. ')[0]?.replace(/\.$/, '')}`,
  );
  return `Usage: podplate ${name} <command> [flags]\n\nCommands:\n${lines.join('\n')}\n\nRun podplate ${name} <command> --help for its flags and an example.\n`;
}

async function runGroup(name: string, group: Group, [sub, ...rest]: string[]): Promise<number> {
  // `podplate templates list | head` stops reading early: not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(groupUsage(name, group));
    return sub === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(group, sub) ? group[sub] : undefined;
  if (!command) throw new UsageError(`unknown command ${name} ${sub}`, groupUsage(name, group));
  return command.run(rest);
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case 'serve':
      case 'migrate':
      case 'keys':
      case 'export':
      case 'import':
      case 'backup':
        return await (await import('./admin.ts')).admin(command, args);
      case 'login':
        return await login(args);
      case 'logout':
        return await logout(args);
      case 'templates':
      case 'endpoints':
      case 'releases':
      case 'registry-auth':
        return await runGroup(command, GROUPS[command] as Group, args);
      case 'secrets':
        // rotate and new-key are admin commands (the database and the keys); set, list and delete talk to the service.
        if (args[0] === 'rotate' || args[0] === 'new-key') return await (await import('./admin.ts')).admin(command, args);
        return await runGroup(command, GROUPS[command] as Group, args);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      note(`podplate: ${(error as Error).message}\n\n${(error as UsageError).usage ?? USAGE}`);
      return 2;
    }
    if (error instanceof PodplateProblem) {
      note(problemText(error));
      return 1;
    }
    if (error instanceof LoginError || error instanceof WatchError || error instanceof PodplateConnectionError) {
      note(`podplate: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
