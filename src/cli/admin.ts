import { createReadStream, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { type Config, ConfigError, readConfig } from '../config.ts';
import type { Role } from '../domain/account.ts';
import { DomainError } from '../domain/errors.ts';
import {
  installKeyFile,
  keyFileOf,
  migrateInstall,
  migrationReport,
  NewerSchema,
  openStore,
  secretsKeyring,
  stderrLog,
} from '../install.ts';
import { FileError, fileProblem, writePrivately } from '../private-files.ts';
import { KeyFormatError, newKeyText } from '../sealing/keyring.ts';
import { backupInstall } from '../transfer/backup.ts';
import { exportInstall, OperationRefused, type TransferSummary } from '../transfer/export.ts';
import { count, InvalidExport, Progress } from '../transfer/format.ts';
import { importInstall } from '../transfer/import.ts';
import { Podplate } from '../usecases/podplate.ts';
import { SealingKeyMismatch } from '../usecases/sealing.ts';
import { UsageError } from './command.ts';

// The admin commands: they reach the database through the use cases, as the server does. main.ts loads this module
// only for them, so the client commands start without the server's dependencies.

class AdminError extends Error {}

/** Runs `work` on the use cases over the configured database; `withKeys` gives it the secrets keys (required then). */
async function withPodplate<T>(work: (podplate: Podplate) => Promise<T>, withKeys = false): Promise<T> {
  const config: Config = readConfig();
  const keyring = withKeys ? secretsKeyring(config) : undefined;
  const store = openStore(config, 2);
  try {
    // An admin command does not wait for a database it can't reach: it says so at once.
    await migrateInstall(store, config, stderrLog, 0);
    return await work(new Podplate(store, { keyring }));
  } finally {
    await store.close();
  }
}

async function keys(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const { values } = parseArgs({ args: rest, options: { user: { type: 'string' }, role: { type: 'string', default: 'user' } } });
    if (!values.user) throw new UsageError('keys create needs --user <name>');
    if (values.role !== 'user' && values.role !== 'platform') throw new UsageError('--role is "user" or "platform"');
    const key = await withPodplate((podplate) => podplate.keys.create(values.user as string, values.role as Role));
    process.stderr.write(`Created key ${key.id} for ${key.account} (${key.role}). It is shown once:\n`);
    process.stdout.write(`${key.secret}\n`);
    return;
  }
  if (action === 'list') {
    parseArgs({ args: rest, options: {} });
    const rows = await withPodplate((podplate) => podplate.keys.list());
    const table = [
      ['ID', 'ACCOUNT', 'ROLE', 'PREFIX', 'CREATED', 'REVOKED', 'ACCESS', 'EXPIRES', 'LABEL'],
      ...rows.map((k) => [
        k.id,
        k.account,
        k.role,
        `${k.prefix}…`,
        k.createdAt,
        k.revokedAt ?? '-',
        k.access,
        k.expiresAt ?? 'never',
        k.label || '-',
      ]),
    ];
    const widths = table[0]?.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length))) ?? [];
    for (const row of table)
      process.stdout.write(
        `${row
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd()}\n`,
      );
    return;
  }
  if (action === 'revoke') {
    const { positionals } = parseArgs({ args: rest, options: {}, allowPositionals: true });
    if (positionals.length !== 1) throw new UsageError('keys revoke needs exactly one key id');
    const id = positionals[0] as string;
    const revoked = await withPodplate((podplate) => podplate.keys.revoke(id));
    if (!revoked) throw new AdminError(`no active key ${id}`);
    process.stderr.write(`Revoked key ${id}.\n`);
    return;
  }
  throw new UsageError(`unknown keys command ${action ?? ''}`.trim());
}

async function secrets(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'new-key') {
    parseArgs({ args: rest, options: {} });
    process.stdout.write(`${newKeyText()}\n`);
    return;
  }
  if (action === 'rotate') {
    parseArgs({ args: rest, options: {} });
    const report = await withPodplate(
      (podplate) =>
        podplate.sealing.rotate((column) =>
          process.stderr.write(`  ${column.what}: ${column.resealed} sealed again, ${column.current} already under the key\n`),
        ),
      true,
    );
    const resealed = report.reduce((sum, column) => sum + column.resealed, 0);
    const unreadable = report.filter((column) => column.unreadable.length > 0);
    process.stderr.write(`Sealed ${resealed} secret${resealed === 1 ? '' : 's'} again under SECRETS_KEY.\n`);
    if (unreadable.length > 0) {
      throw new AdminError(
        `some secrets open with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS, and were left as they are: ${unreadable
          .map((column) => `${column.what} ${column.unreadable.join(', ')}`)
          .join('; ')}`,
      );
    }
    process.stderr.write('Every secret is now sealed under SECRETS_KEY: SECRETS_KEY_PREVIOUS can be removed.\n');
    return;
  }
  throw new UsageError(`unknown secrets command ${action ?? ''}`.trim());
}

async function withStore<T>(work: (store: ReturnType<typeof openStore>) => Promise<T>): Promise<T> {
  const store = openStore(readConfig(), 2);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const say = (message: string) => process.stderr.write(`${message}\n`);
const summary = (verb: string, s: TransferSummary) =>
  `${verb} ${count(s.tables.templates ?? 0)} templates (${count(s.rows)} rows in all) in ${s.seconds.toFixed(1)} s` +
  ` (${count(Math.round((s.tables.templates ?? 0) / Math.max(s.seconds, 0.001)))} templates/s),` +
  ` peak memory ${peakMemoryMb()} MB.`;

/**
 * This process's peak resident memory, in MB: Linux's VmHWM, which starts afresh at exec. `resourceUsage().maxRSS`
 * does not: it keeps the peak of the process that started this one (a 1.3 GB benchmark made every export report
 * 1,273 MB). Elsewhere, maxRSS is what there is.
 */
function peakMemoryMb(): number {
  try {
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (hwm) return Math.round(Number(hwm) / 1024);
  } catch {}
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** `export [--output FILE]`: the install as NDJSON, on stdout or in FILE (written whole, or not at all). */
async function exportCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { output: { type: 'string', short: 'o' } } });
  const file = values.output;
  if (file && existsSync(file)) throw new AdminError(`${file} exists; an export never overwrites a file`);
  const run = (output: Writable) => withStore((store) => exportInstall(store, output, new Progress(say)));
  // A file holds every env value of the install: private to its maker (private-files.ts).
  const done = file ? await writePrivately(file, ({ stream }) => run(stream()), { what: 'export to' }) : await run(process.stdout);
  say(summary('Exported', done));
}

/** `import [--input FILE]`: an export, from stdin or FILE, into the empty database DATABASE_URL names. */
async function importCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { input: { type: 'string', short: 'i' } } });
  let input: Readable = process.stdin;
  if (values.input) {
    try {
      input = createReadStream('', { fd: openSync(values.input, 'r') });
    } catch (error) {
      throw fileProblem(error, 'read', values.input);
    }
  }
  const done = await withStore((store) => importInstall(store, input, new Progress(say)));
  say(summary('Imported', done));
}

/** `backup FILE`: a consistent copy of a SQLite install while it serves; restored by pointing DATABASE_URL at it. */
async function backupCommand(args: string[]): Promise<void> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
  if (positionals.length !== 1) throw new UsageError('backup needs exactly one file to write');
  const file = positionals[0] as string;
  if (existsSync(file)) throw new AdminError(`${file} exists; a backup never overwrites a file`);
  const seconds = await withStore((store) => backupInstall(store, file));
  say(`Backed up to ${file} in ${seconds.toFixed(1)} s; serve it with DATABASE_URL=sqlite:${file}`);
  // The secrets in the copy are sealed under the install's key: without it the copy can't be served.
  const config = readConfig();
  const key = installKeyFile(config);
  if (config.SECRETS_KEY) say('Its secrets are sealed under SECRETS_KEY: serve it with the same SECRETS_KEY.');
  else if (key && existsSync(key)) {
    writeFileSync(keyFileOf(file), readFileSync(key), { mode: 0o600, flag: 'wx' });
    say(`Its secrets key was copied beside it, to ${keyFileOf(file)} (mode 0600): keep the two together.`);
  }
}

/**
 * `migrate [--status | --dry-run]`: bring the schema up to date (a SQLite file is backed up first, beside itself); or
 * list applied and pending migrations; or say what would run. The last two change nothing.
 */
async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { status: { type: 'boolean' }, 'dry-run': { type: 'boolean' } } });
  if (values.status && values['dry-run']) throw new UsageError('migrate takes --status or --dry-run, not both');
  if (!values.status && !values['dry-run']) {
    await withPodplate(async () => undefined);
    say('The database schema is up to date.');
    return;
  }
  const config = readConfig();
  const { applied, pending, latest, declared, backup } = await withStore((store) => migrationReport(store, config));
  const newer = applied.filter((m) => !m.known);
  const yesNo = (value: boolean | null | undefined) => (value === true ? 'yes' : value === false ? 'no' : '-');
  if (values.status) {
    const rows = [
      ['MIGRATION', 'STATE', 'APPLIED', 'COMPATIBLE'],
      ...applied.map((m) => [
        m.name,
        m.known ? 'applied' : 'newer',
        m.appliedAt,
        yesNo(m.known ? declared.get(m.name) : (m.compatible ?? false)),
      ]),
      ...pending.map((name) => [name, 'pending', '-', yesNo(declared.get(name))]),
    ];
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
    for (const row of rows)
      process.stdout.write(
        `${row
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd()}\n`,
      );
    say(
      `${applied.length - newer.length} applied, ${pending.length} pending (this version knows up to ${latest})` +
        (newer.length > 0 ? `; ${newer.length} of a newer version` : '') +
        '. COMPATIBLE: whether processes of the version before may serve beside it, as recorded.',
    );
    return;
  }
  if (newer.length > 0) {
    const refused = newer.filter((m) => m.compatible !== true);
    if (refused.length > 0 || pending.length > 0) throw new NewerSchema(newer, refused, pending, latest);
    say(
      `Nothing would run: the database has migrations of a newer version (${newer.map((m) => m.name).join(', ')}), recorded as compatible.`,
    );
    return;
  }
  if (pending.length === 0) {
    say('The database schema is up to date: nothing would run.');
    return;
  }
  say(`Would apply ${pending.length} migration${pending.length === 1 ? '' : 's'}: ${pending.join(', ')}.`);
  for (const name of pending)
    if (declared.get(name) === false) say(`  ${name}: processes of the version before may not serve beside it: stop them first.`);
  if (backup) say(`It would back up the database to ${backup} first.`);
}

export type AdminCommand = 'serve' | 'migrate' | 'keys' | 'secrets' | 'export' | 'import' | 'backup';

/** Runs an admin command; a bad setting, a refused operation or a failed key operation is exit 1. */
export async function admin(command: AdminCommand, args: string[]): Promise<number> {
  try {
    // The server's code (Fastify, the routes) is loaded for serve alone.
    if (command === 'serve') await (await import('../server.ts')).serve();
    else if (command === 'migrate') await migrateCommand(args);
    else if (command === 'secrets') await secrets(args);
    else if (command === 'export') await exportCommand(args);
    else if (command === 'import') await importCommand(args);
    else if (command === 'backup') await backupCommand(args);
    else await keys(args);
    return 0;
  } catch (error) {
    if (error instanceof InvalidExport) {
      process.stderr.write(`podplate: the import was refused, and nothing was imported: ${error.message}\n`);
      return 1;
    }
    if (
      error instanceof AdminError ||
      error instanceof ConfigError ||
      error instanceof DomainError ||
      error instanceof OperationRefused ||
      error instanceof SealingKeyMismatch ||
      error instanceof FileError ||
      error instanceof KeyFormatError ||
      error instanceof NewerSchema
    ) {
      process.stderr.write(`podplate: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
