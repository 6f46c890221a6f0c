import { readFileSync } from 'node:fs';
import { toArray } from '../client/index.ts';
import { defineCommand, parseCommand, UsageError, usageOf } from './args.ts';
import { client } from './config.ts';
import { note, out, printJson, registryAuthDetails, registryAuthTable } from './output.ts';

// podplate registry-auth create|list|delete: credentials for private registries. The password is read from stdin
// only, never from a flag (a flag shows in the process list and the shell's history).

const createSpec = defineCommand({
  name: 'registry-auth create',
  summary:
    'Store credentials for a private container registry; a template of yours then names them with --registry-auth <id>. ' +
    'The password is read from stdin, stored encrypted, and never shown again.',
  options: { name: { type: 'string' }, username: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
  help: {
    '--name <name>': 'a name, unique among your registry auths',
    '--username <user>': 'the registry user name',
    '--password-stdin': 'read the password (or token) from stdin; a trailing newline is dropped',
    '--json': "print the API's JSON",
  },
  examples: [
    'podplate registry-auth create --name gcr --username _json_key --password-stdin < key.json',
    'echo "$GHCR_TOKEN" | podplate registry-auth create --name ghcr --username octocat --password-stdin',
  ],
});

async function create(argv: string[]): Promise<number> {
  const parsed = parseCommand(createSpec, argv);
  if (!parsed) return 0;
  const { values } = parsed;
  const usage = usageOf(createSpec);
  if (values.name === undefined || values.username === undefined)
    throw new UsageError(`registry credentials need ${values.name === undefined ? '--name' : '--username'}`, usage);
  if (!values['password-stdin']) throw new UsageError('give the password on stdin, with --password-stdin', usage);
  if (process.stdin.isTTY) note('Type the password, then Enter and Ctrl-D:');
  const password = readFileSync(0, 'utf8').replace(/(\r?\n)+$/, '');
  if (password === '') throw new UsageError('the password read from stdin is empty', usage);
  const auth = await client().createRegistryAuth({ name: values.name, username: values.username, password });
  if (values.json) printJson(auth);
  else {
    out(`Created registry auth ${auth.id}.\n\n${registryAuthDetails(auth)}`);
    note(`Use it in a template: podplate templates update <template-id> --registry-auth ${auth.id}`);
  }
  return 0;
}

const listSpec = defineCommand({
  name: 'registry-auth list',
  summary: 'List your registry auths, newest first (never their passwords).',
  options: {},
  help: { '--json': "print the API's JSON: an array of every registry auth" },
  examples: ['podplate registry-auth list'],
});

async function list(argv: string[]): Promise<number> {
  const parsed = parseCommand(listSpec, argv);
  if (!parsed) return 0;
  const auths = await toArray(client().listRegistryAuths());
  if (parsed.values.json) printJson(auths);
  else if (auths.length === 0) note('No registry auths.');
  else out(registryAuthTable(auths));
  return 0;
}

const deleteSpec = defineCommand({
  name: 'registry-auth delete',
  args: ['<registry-auth-id>'],
  summary: 'Delete a registry auth. While a template of yours uses it, it cannot be deleted.',
  options: {},
  help: { '--json': 'print nothing (the API answers 204)' },
  examples: ['podplate registry-auth delete 8m2k4d0v7m3qh8wz'],
});

async function remove(argv: string[]): Promise<number> {
  const parsed = parseCommand(deleteSpec, argv);
  if (!parsed) return 0;
  const id = parsed.positionals[0] as string;
  await client().deleteRegistryAuth(id);
  if (!parsed.values.json) note(`Deleted registry auth ${id}.`);
  return 0;
}

export const registryAuthCommands = {
  create: { spec: createSpec, run: create },
  list: { spec: listSpec, run: list },
  delete: { spec: deleteSpec, run: remove },
};
