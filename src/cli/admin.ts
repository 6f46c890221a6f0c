import { createReadStream, createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { ConfigError, readConfig } from '../config.ts';
import type { Role } from '../domain/account.ts';
import { DomainError } from '../domain/errors.ts';
import { backupInstall } from '../operations/backup.ts';
import { exportInstall, OperationRefused, type TransferSummary } from '../operations/export.ts';
import { count, InvalidExport, Progress } from '../operations/format.ts';
import { importInstall } from '../operations/import.ts';
import { Registry } from '../registry/registry.ts';
import { openStore, serve } from '../server.ts';
import { UsageError } from './args.ts';

// The admin commands: they reach the database through the registry, as the server does. main.ts loads this module
// only for them, so the client commands start without the server's dependencies.

class AdminError extends Error {}

async function withRegistry<T>(work: (registry: Registry) => Promise<T>): Promise<T> {
  const config = readConfig();
  const store = openStore(config, 2);
  try {
    await store.migrate();
    return await work(new Registry(store, { keyCacheTtlMs: 0 }));
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
    const key = await withRegistry((registry) => registry.keys.create(values.user as string, values.role as Role));
    process.stderr.write(`Created key ${key.id} for ${key.account} (${key.role}). It is shown once:\n`);
    process.stdout.write(`${key.secret}\n`);
    return;
  }
  if (action === 'list') {
    parseArgs({ args: rest, options: {} });
    const rows = await withRegistry((registry) => registry.keys.list());
    const table = [
      ['ID', 'ACCOUNT', 'ROLE', 'PREFIX', 'CREATED', 'REVOKED'],
      ...rows.map((k) => [k.id, k.account, k.role, `${k.prefix}…`, k.createdAt, k.revokedAt ?? '-']),
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
    const revoked = await withRegistry((registry) => registry.keys.revoke(id));
    if (!revoked) throw new AdminError(`no active key ${id}`);
    process.stderr.write(`Revoked key ${id}.\n`);
    return;
  }
  throw new UsageError(`unknown keys command ${action ?? ''}`.trim());
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
  ` peak memory ${Math.round(process.resourceUsage().maxRSS / 1024)} MB.`;

/** `export [--output FILE]`: the install as NDJSON, on stdout or in FILE (written whole, or not at all). */
async function exportCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { output: { type: 'string', short: 'o' } } });
  const file = values.output;
  const partial = file && `${file}.partial`;
  if (file && existsSync(file)) throw new AdminError(`${file} exists; an export never overwrites a file`);
  const output = partial ? createWriteStream(partial) : process.stdout;
  try {
    const done = await withStore((store) => exportInstall(store, output, new Progress(say)));
    if (partial && file) {
      output.end();
      await finished(output);
      renameSync(partial, file);
    }
    say(summary('Exported', done));
  } catch (error) {
    if (partial) {
      output.destroy();
      rmSync(partial, { force: true });
    }
    throw error;
  }
}

/** `import [--input FILE]`: an export, from stdin or FILE, into the empty database DATABASE_URL names. */
async function importCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { input: { type: 'string', short: 'i' } } });
  const input = values.input ? createReadStream(values.input) : process.stdin;
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
}

export type AdminCommand = 'serve' | 'migrate' | 'keys' | 'export' | 'import' | 'backup';

/** Runs an admin command; a bad setting, a refused operation or a failed key operation is exit 1. */
export async function admin(command: AdminCommand, args: string[]): Promise<number> {
  try {
    if (command === 'serve') await serve();
    else if (command === 'migrate') {
      await withRegistry(async () => undefined);
      process.stderr.write('The database schema is up to date.\n');
    } else if (command === 'export') await exportCommand(args);
    else if (command === 'import') await importCommand(args);
    else if (command === 'backup') await backupCommand(args);
    else await keys(args);
    return 0;
  } catch (error) {
    if (error instanceof InvalidExport) {
      process.stderr.write(`podplate: the import was refused, and nothing was imported: ${error.message}\n`);
      return 1;
    }
    if (error instanceof AdminError || error instanceof ConfigError || error instanceof DomainError || error instanceof OperationRefused) {
      process.stderr.write(`podplate: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
