import type { Command } from 'commander';
import { toArray } from '../client/index.ts';
import { confirm, type OutputFlags, printData, printList, readStdin, UsageError, withOutput } from './command.ts';
import { client } from './config.ts';
import { note, out, registryAuthDetails, registryAuthShape } from './output.ts';

// podplate registry-auth create|list|delete: credentials for private registries. The password is read from stdin
// only, never from a flag (a flag shows in the process list and the shell's history).

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

async function create(flags: OutputFlags & { name?: string; username?: string; passwordStdin?: boolean }): Promise<void> {
  if (flags.name === undefined || flags.username === undefined)
    throw new UsageError(`registry credentials need ${flags.name === undefined ? '--name' : '--username'}`);
  if (!flags.passwordStdin) throw new UsageError('give the password on stdin, with --password-stdin');
  if (process.stdin.isTTY) note('Type the password, then Enter and Ctrl-D:');
  const password = (await readStdin()).replace(/(\r?\n)+$/, '');
  if (password === '') throw new UsageError('the password read from stdin is empty');
  const auth = await client().createRegistryAuth({ name: flags.name, username: flags.username, password });
  if (printData(auth, flags)) return;
  out(`Created registry auth ${auth.id}.\n\n${registryAuthDetails(auth)}`);
  note(`Use it in a template: podplate templates update <template-id> --registry-auth ${auth.id}`);
}

async function list(flags: OutputFlags): Promise<void> {
  printList(await toArray(client().listRegistryAuths()), registryAuthShape, flags, 'No registry auths.');
}

async function remove(id: string, flags: { yes?: boolean }): Promise<void> {
  if (!(await confirm(flags.yes, `registry auth ${id}`))) {
    note('Not deleted.');
    return;
  }
  await client().deleteRegistryAuth(id);
  note(`Deleted registry auth ${id}.`);
}

export function registryAuthCommands(program: Command): void {
  const group = program
    .command('registry-auth')
    .alias('registry-auths')
    .description('Credentials for private registries: create, list, delete');
  withOutput(
    group
      .command('create')
      .description(
        'Store credentials for a private container registry; a template of yours then names them with --registry-auth <id>. ' +
          'The password is read from stdin, stored encrypted, and never shown again.',
      )
      .option('--name <name>', 'a name, unique among your registry auths')
      .option('--username <user>', 'the registry user name')
      .option('--password-stdin', 'read the password (or token) from stdin; a trailing newline is dropped'),
  )
    .addHelpText(
      'after',
      examples(
        'podplate registry-auth create --name gcr --username _json_key --password-stdin < key.json',
        'echo "$GHCR_TOKEN" | podplate registry-auth create --name ghcr --username octocat --password-stdin',
      ),
    )
    .action(create);
  withOutput(group.command('list').alias('ls').description('List your registry auths, newest first (never their passwords).'), true)
    .addHelpText('after', examples('podplate registry-auth list'))
    .action(list);
  group
    .command('delete')
    .aliases(['rm', 'remove'])
    .description('Delete a registry auth. While a template of yours uses it, it cannot be deleted.')
    .argument('<registry-auth-id>')
    .option('-y, --yes', 'delete without asking (required when stdin is not a terminal)')
    .option('--json', 'accepted for scripts; prints nothing on stdout (the API answers 204)')
    .addHelpText('after', examples('podplate registry-auth delete 8m2k4d0v7m3qh8wz --yes'))
    .action(remove);
}
