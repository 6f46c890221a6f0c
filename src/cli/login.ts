import type { Command } from 'commander';
import { createPodplateClient, isHttpUrl, serviceUrl } from '../client/index.ts';
import { hiddenInput, type OutputFlags, printData, readStdin, UsageError, withOutput } from './command.ts';
import { client, configPath, connection, forget, readSaved, save } from './config.ts';
import { details, note, out, printJson } from './output.ts';

// podplate login / logout / whoami: the saved URL and key that the client commands use, and who they act as.

const DEFAULT_URL = 'http://127.0.0.1:8080';

interface LoginFlags {
  url?: string;
  apiKey?: string;
  apiKeyStdin?: boolean;
  json?: boolean;
}

async function login(flags: LoginFlags): Promise<void> {
  if (flags.apiKey !== undefined && flags.apiKeyStdin) throw new UsageError('give --api-key or --api-key-stdin, not both');
  let apiKey = flags.apiKey;
  if (apiKey === undefined) {
    // On a terminal the key is asked for without echo: a key typed as a flag stays in the shell's history.
    if (process.stdin.isTTY && !flags.apiKeyStdin) apiKey = (await hiddenInput('API key (input hidden): ')).trim();
    else apiKey = (await readStdin()).trim();
  }
  if (!apiKey) throw new UsageError('the API key is empty');
  const url = serviceUrl(flags.url ?? (process.env.PODPLATE_URL || readSaved().url || DEFAULT_URL));
  if (!isHttpUrl(url)) throw new UsageError(`--url must be an http(s) URL, not ${JSON.stringify(url)}`);

  // One cheap authenticated call: a wrong key or URL fails here, not in the first real command.
  const me = await createPodplateClient({ url, apiKey }).me();
  const path = configPath();
  await save({ url, apiKey }, path);
  if (flags.json) printJson({ url, config: path, accountName: me.accountName });
  else note(`Logged in to ${url} as ${me.accountName}${me.isPlatform ? ' (platform)' : ''}; saved in ${path}.`);
}

async function whoami(flags: OutputFlags): Promise<void> {
  const { url } = connection();
  const me = await client().me();
  if (printData({ url, ...me }, flags)) return;
  out(
    details([
      ['Account', `${me.accountName} (${me.accountId})`],
      ['Role', me.isPlatform ? 'platform (your templates are official)' : me.role],
      ['Key', `${me.keyId} (${me.keyPrefix}…)`],
      ['Service', url],
    ]),
  );
}

export function loginCommands(program: Command): void {
  program
    .command('login')
    .description(
      'Check an API key against the service and save the URL and key in $XDG_CONFIG_HOME/podplate/config.json ' +
        '(~/.config/podplate/config.json; mode 0600). PODPLATE_URL and PODPLATE_API_KEY override the saved values.',
    )
    .option('--url <url>', `the service, with or without /v1 (default: the saved one, else ${DEFAULT_URL})`)
    .option('--api-key <key>', 'the key, pp_… (without it: asked for with hidden input on a terminal, else read from stdin)')
    .option('--api-key-stdin', 'read the key from stdin')
    .option('--json', 'print the saved URL and file as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  podplate login --url https://podplate.example.com\n' +
        '  echo "$PODPLATE_KEY" | podplate login --url https://podplate.example.com/v1 --api-key-stdin\n',
    )
    .action(login);
  program
    .command('logout')
    .description('Forget the saved URL and key.')
    .addHelpText('after', '\nExamples:\n  podplate logout\n')
    .action(() => {
      note(forget(configPath()) ? `Removed ${configPath()}.` : 'Not logged in.');
    });
  withOutput(program.command('whoami').description('Show the account and key the client commands act as (GET /v1/me).'))
    .addHelpText('after', '\nExamples:\n  podplate whoami\n  podplate whoami -o json | jq -r .accountName\n')
    .action(whoami);
}
