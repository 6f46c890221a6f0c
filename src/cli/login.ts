import { readFileSync } from 'node:fs';
import { createPodplateClient, isHttpUrl } from '../client/index.ts';
import { defineCommand, parseCommand, UsageError, usageOf } from './args.ts';
import { configPath, forget, readSaved, save } from './config.ts';
import { note, printJson } from './output.ts';

// podplate login / logout: the saved URL and key that the client commands use.

const DEFAULT_URL = 'http://127.0.0.1:8080';

const loginSpec = defineCommand({
  name: 'login',
  summary:
    'Check an API key against the service and save the URL and key in $XDG_CONFIG_HOME/podplate/config.json ' +
    '(~/.config/podplate/config.json; mode 0600). PODPLATE_URL and PODPLATE_API_KEY override the saved values.',
  options: { url: { type: 'string' }, 'api-key': { type: 'string' }, 'api-key-stdin': { type: 'boolean' } },
  help: {
    '--url <url>': `the service, without /v1 (default: the saved one, else ${DEFAULT_URL})`,
    '--api-key <key>': 'the key, pp_…',
    '--api-key-stdin': 'read the key from stdin (the default when stdin is not a terminal)',
    '--json': 'print the saved URL and file as JSON',
  },
  examples: [
    'podplate login --url https://podplate.example.com --api-key pp_…',
    'echo "$PODPLATE_KEY" | podplate login --url https://podplate.example.com --api-key-stdin',
  ],
});

export async function login(argv: string[]): Promise<number> {
  const parsed = parseCommand(loginSpec, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const usage = usageOf(loginSpec);
  if (values['api-key'] !== undefined && values['api-key-stdin'])
    throw new UsageError('give --api-key or --api-key-stdin, not both', usage);
  let apiKey = values['api-key'];
  if (apiKey === undefined) {
    if (process.stdin.isTTY && !values['api-key-stdin'])
      throw new UsageError('give the key with --api-key, or pipe it on stdin with --api-key-stdin', usage);
    apiKey = readFileSync(0, 'utf8').trim();
  }
  if (!apiKey) throw new UsageError('the API key is empty', usage);
  const url = (values.url ?? (process.env.PODPLATE_URL || readSaved().url || DEFAULT_URL)).replace(/\/+$/, '');
  if (!isHttpUrl(url)) throw new UsageError(`--url must be an http(s) URL, not ${JSON.stringify(url)}`, usage);

  // One cheap authenticated call: a wrong key or URL fails here, not in the first real command.
  await createPodplateClient({ url, apiKey }).listTemplatesPage({ limit: 1 });
  const path = configPath();
  save({ url, apiKey }, path);
  if (values.json) printJson({ url, config: path });
  else note(`Logged in to ${url}; saved in ${path}.`);
  return 0;
}

const logoutSpec = defineCommand({
  name: 'logout',
  summary: 'Forget the saved URL and key.',
  options: {},
  help: {},
  examples: ['podplate logout'],
});

export async function logout(argv: string[]): Promise<number> {
  if (!parseCommand(logoutSpec, argv)) return 0;
  const path = configPath();
  note(forget(path) ? `Removed ${path}.` : 'Not logged in.');
  return 0;
}
