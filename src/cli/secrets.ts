import { readFileSync } from 'node:fs';
import { type Secret, toArray } from '../client/index.ts';
import { defineCommand, parseCommand, UsageError, usageOf } from './args.ts';
import { client } from './config.ts';
import { note, out, printJson, table } from './output.ts';

// podplate secrets set|list|delete: the caller's own secrets, which a template's env refers to as {{ secret.NAME }}.
// The value is read from stdin only, never from a flag (a flag shows in the process list and the shell's history).
// (`podplate secrets rotate` and `new-key` are admin commands: main.ts sends those to admin.ts.)

const setSpec = defineCommand({
  name: 'secrets set',
  args: ['<name>'],
  summary:
    'Create one of your secrets, or replace its value. A template refers to it as {{ secret.NAME }}; at launch your own ' +
    'value takes its place. The value is read from stdin, stored encrypted, and never shown again.',
  options: { 'value-stdin': { type: 'boolean' } },
  help: {
    '--value-stdin': 'read the value from stdin; a trailing newline is dropped',
    '--json': "print the API's JSON",
  },
  examples: [
    'echo "$HF_TOKEN" | podplate secrets set HF_TOKEN --value-stdin',
    "podplate templates update <template-id> --env 'HF_TOKEN={{ secret.HF_TOKEN }}'",
  ],
});

async function set(argv: string[]): Promise<number> {
  const parsed = parseCommand(setSpec, argv);
  if (!parsed) return 0;
  const usage = usageOf(setSpec);
  if (!parsed.values['value-stdin']) throw new UsageError('give the value on stdin, with --value-stdin', usage);
  if (process.stdin.isTTY) note('Type the value, then Enter and Ctrl-D:');
  const value = readFileSync(0, 'utf8').replace(/(\r?\n)+$/, '');
  if (value === '') throw new UsageError('the value read from stdin is empty', usage);
  const name = parsed.positionals[0] as string;
  const secret = await client().putSecret(name, value);
  if (parsed.values.json) printJson(secret);
  else {
    out(`Set secret ${secret.name}.`);
    note(`Refer to it in a template's env: {{ secret.${secret.name} }}`);
  }
  return 0;
}

const listSpec = defineCommand({
  name: 'secrets list',
  summary: 'List your secrets, newest first: names and dates, never values.',
  options: {},
  help: { '--json': "print the API's JSON: an array of every secret" },
  examples: ['podplate secrets list'],
});

export const secretTable = (secrets: Secret[]): string =>
  table(
    ['NAME', 'CREATED', 'UPDATED'],
    secrets.map((s) => [s.name, s.createdAt, s.updatedAt]),
  );

async function list(argv: string[]): Promise<number> {
  const parsed = parseCommand(listSpec, argv);
  if (!parsed) return 0;
  const secrets = await toArray(client().listSecrets());
  if (parsed.values.json) printJson(secrets);
  else if (secrets.length === 0) note('No secrets.');
  else out(secretTable(secrets));
  return 0;
}

const deleteSpec = defineCommand({
  name: 'secrets delete',
  args: ['<name>'],
  summary: 'Delete one of your secrets. Templates that refer to it can no longer be launched by you until it is set again.',
  options: {},
  help: { '--json': 'print nothing (the API answers 204)' },
  examples: ['podplate secrets delete HF_TOKEN'],
});

async function remove(argv: string[]): Promise<number> {
  const parsed = parseCommand(deleteSpec, argv);
  if (!parsed) return 0;
  const name = parsed.positionals[0] as string;
  await client().deleteSecret(name);
  if (!parsed.values.json) note(`Deleted secret ${name}.`);
  return 0;
}

export const secretCommands = {
  set: { spec: setSpec, run: set },
  list: { spec: listSpec, run: list },
  delete: { spec: deleteSpec, run: remove },
};
