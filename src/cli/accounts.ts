import { type Command, Option } from 'commander';
import type { ApiKey, CreatedApiKey } from '../client/index.ts';
import { confirm, type OutputFlags, printData, printList, type Shape, UsageError, withOutput } from './command.ts';
import { client } from './config.ts';
import { ago, note, out } from './output.ts';

// podplate accounts create, and podplate accounts keys create|list|revoke: accounts and their keys over the API (a
// client command, with a login or PODPLATE_URL). The admin's `podplate keys …` does the same on the database itself.

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--expires`: a duration from now (`90m`, `12h`, `30d`) or an ISO 8601 time; the ISO time it stands for. */
export function expiryOf(text: string, now = Date.now()): string {
  const duration = /^(\d{1,6})([mhd])$/.exec(text);
  if (duration) return new Date(now + Number(duration[1]) * (UNITS[duration[2] as string] as number)).toISOString();
  if (/^\d{4}-\d\d-\d\d/.test(text) && !Number.isNaN(Date.parse(text))) return new Date(text).toISOString();
  throw new UsageError(`--expires takes a duration (90m, 12h, 30d) or an ISO 8601 time, not ${JSON.stringify(text)}`);
}

const keyShape: Shape<ApiKey> = {
  columns: [
    { header: 'ID' },
    { header: 'LABEL', flex: true },
    { header: 'ACCESS' },
    { header: 'EXPIRES' },
    { header: 'LAST USED' },
    { header: 'CREATED' },
  ],
  row: (k) => [
    k.id,
    k.label || '-',
    k.access,
    k.expiresAt ? `${Date.parse(k.expiresAt) <= Date.now() ? 'expired ' : ''}${ago(k.expiresAt)}` : 'never',
    k.lastUsedAt ? ago(k.lastUsedAt) : 'never',
    ago(k.createdAt),
  ],
  id: (k) => k.id,
};

/** The account the command is about: `--account`, or the caller's own. */
async function accountOf(flags: { account?: string }): Promise<string> {
  return flags.account ?? (await client().me()).accountName;
}

async function createAccount(name: string, flags: OutputFlags & { role?: 'user' | 'platform' }): Promise<void> {
  const account = await client().createAccount({ name, role: flags.role });
  if (printData(account, flags)) return;
  note(`Created account ${account.name} (${account.role}). Give it a key: podplate accounts keys create --account ${account.name}`);
}

async function createKey(flags: OutputFlags & { account?: string; label?: string; readOnly?: boolean; expires?: string }): Promise<void> {
  const expiresAt = flags.expires === undefined ? undefined : expiryOf(flags.expires);
  const account = await accountOf(flags);
  const key: CreatedApiKey = await client().createApiKey(account, {
    label: flags.label,
    access: flags.readOnly ? 'read' : 'read-write',
    expiresAt,
  });
  if (printData(key, flags)) return;
  note(`Created key ${key.id} for ${account} (${key.access}${key.expiresAt ? `, expires ${key.expiresAt}` : ''}). It is shown once:`);
  out(key.key);
}

async function listKeys(flags: OutputFlags & { account?: string }): Promise<void> {
  printList(await client().listApiKeys(await accountOf(flags)), keyShape, flags, 'No keys.');
}

async function revokeKey(id: string, flags: { account?: string; yes?: boolean }): Promise<void> {
  const account = await accountOf(flags);
  if (!(await confirm(flags.yes, `key ${id} of ${account}`, 'revoke'))) {
    note('Not revoked.');
    return;
  }
  await client().revokeApiKey(account, id);
  note(`Revoked key ${id}: every process refuses it from now on.`);
}

export function accountCommands(program: Command): void {
  const group = program
    .command('accounts')
    .alias('account')
    .description('Accounts and their API keys, over the API: create accounts (platform keys), create, list and revoke keys');
  withOutput(
    group
      .command('create')
      .description('Create an account (platform keys only); then give it keys with `podplate accounts keys create`.')
      .argument('<name>', 'the account name')
      .addOption(new Option('--role <role>', 'user (default) or platform').choices(['user', 'platform'])),
  )
    .addHelpText('after', examples('podplate accounts create alice', 'podplate accounts create billing --role platform'))
    .action(createAccount);

  const keys = group
    .command('keys')
    .alias('key')
    .description("An account's API keys: create, list, revoke (your own account's, or with a platform key any account's)");
  const account = '--account <name>';
  const accountHelp = 'the account (default: your own); other accounts need a platform key';
  withOutput(
    keys
      .command('create')
      .description('Create a key; it is printed alone on stdout, this once (with -o json: the whole answer).')
      .option(account, accountHelp)
      .option('--label <label>', 'what the key is for')
      .option('--read-only', 'a key that reads only: every write it tries is refused (403)')
      .option('--expires <when>', 'when it stops working: a duration from now (90m, 12h, 30d) or an ISO 8601 time'),
  )
    .addHelpText(
      'after',
      examples(
        'podplate accounts keys create --label laptop',
        'podplate accounts keys create --account alice --label dashboard --read-only --expires 30d',
      ),
    )
    .action(createKey);
  withOutput(
    keys
      .command('list')
      .alias('ls')
      .description('List the keys that are not revoked (never the keys themselves).')
      .option(account, accountHelp),
    true,
  )
    .addHelpText('after', examples('podplate accounts keys list', 'podplate accounts keys list --account alice -o json'))
    .action(listKeys);
  keys
    .command('revoke')
    .aliases(['rm', 'delete'])
    .description('Revoke a key: every process refuses it from then on.')
    .argument('<key-id>')
    .option(account, accountHelp)
    .option('-y, --yes', 'revoke without asking (required when stdin is not a terminal)')
    .addHelpText('after', examples('podplate accounts keys revoke key_0123456789abcdef --yes'))
    .action(revokeKey);
}
