import type { Command } from 'commander';
import { type Secret, toArray } from '../client/index.ts';
import { confirm, type OutputFlags, printData, printList, readStdin, type Shape, UsageError, withOutput } from './command.ts';
import { client } from './config.ts';
import { ago, note, out } from './output.ts';

// podplate secrets set|list|delete: the caller's own secrets, which a template's env refers to as {{ secret.NAME }}.
// The value is read from stdin only, never from a flag (a flag shows in the process list and the shell's history).
// `secrets rotate` and `secrets new-key` are admin commands: main.ts hands those to admin.ts.

/** The secrets subcommands that are admin commands (the database and the keys), not calls to the service. */
export const ADMIN_SECRETS = ['rotate', 'new-key'];

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

const secretShape: Shape<Secret> = {
  columns: [{ header: 'NAME', flex: true }, { header: 'CREATED' }, { header: 'UPDATED' }],
  row: (s) => [s.name, ago(s.createdAt), ago(s.updatedAt)],
  id: (s) => s.name,
};

async function set(name: string, flags: OutputFlags & { valueStdin?: boolean }): Promise<void> {
  if (!flags.valueStdin) throw new UsageError('give the value on stdin, with --value-stdin');
  if (process.stdin.isTTY) note('Type the value, then Enter and Ctrl-D:');
  const value = (await readStdin()).replace(/(\r?\n)+$/, '');
  if (value === '') throw new UsageError('the value read from stdin is empty');
  const secret = await client().putSecret(name, value);
  if (printData(secret, flags)) return;
  out(`Set secret ${secret.name}.`);
  note(`Refer to it in a template's env: {{ secret.${secret.name} }}`);
}

async function list(flags: OutputFlags): Promise<void> {
  printList(await toArray(client().listSecrets()), secretShape, flags, 'No secrets.');
}

async function remove(name: string, flags: { yes?: boolean }): Promise<void> {
  if (!(await confirm(flags.yes, `secret ${name}`))) {
    note('Not deleted.');
    return;
  }
  await client().deleteSecret(name);
  note(`Deleted secret ${name}.`);
}

export function secretCommands(program: Command): void {
  const group = program
    .command('secrets')
    .description('Your secrets, which templates refer to as {{ secret.NAME }}: set, list, delete (rotate, new-key: admin)');
  withOutput(
    group
      .command('set')
      .description(
        'Create one of your secrets, or replace its value. A template refers to it as {{ secret.NAME }}; at launch the ' +
          "launching account's own value takes its place. The value is read from stdin, stored encrypted, never shown again.",
      )
      .argument('<name>')
      .option('--value-stdin', 'read the value from stdin; a trailing newline is dropped'),
  )
    .addHelpText(
      'after',
      examples(
        'echo "$HF_TOKEN" | podplate secrets set HF_TOKEN --value-stdin',
        "podplate templates update <template-id> -e 'HF_TOKEN={{ secret.HF_TOKEN }}'",
      ),
    )
    .action(set);
  withOutput(group.command('list').alias('ls').description('List your secrets, newest first: names and dates, never values.'), true)
    .addHelpText('after', examples('podplate secrets list'))
    .action(list);
  group
    .command('delete')
    .aliases(['rm', 'remove'])
    .description('Delete one of your secrets. Templates that refer to it can no longer be launched by you until it is set again.')
    .argument('<name>')
    .option('-y, --yes', 'delete without asking (required when stdin is not a terminal)')
    .option('--json', 'accepted for scripts; prints nothing on stdout (the API answers 204)')
    .addHelpText('after', examples('podplate secrets delete HF_TOKEN --yes'))
    .action(remove);
  // Listed for --help and completion; run by admin.ts with their arguments as given.
  group.command('rotate').description('Seal every secret again under SECRETS_KEY [admin]').helpOption(false);
  group.command('new-key').description('Print a new key for SECRETS_KEY [admin]').helpOption(false);
}
