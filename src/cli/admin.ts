import { parseArgs } from 'node:util';
import { ConfigError, readConfig } from '../config.ts';
import type { Role } from '../domain/account.ts';
import { DomainError } from '../domain/errors.ts';
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

/** Runs `serve`, `migrate` or `keys …`; a bad setting or key operation is exit 1. */
export async function admin(command: 'serve' | 'migrate' | 'keys', args: string[]): Promise<number> {
  try {
    if (command === 'serve') await serve();
    else if (command === 'migrate') {
      await withRegistry(async () => undefined);
      process.stderr.write('The database schema is up to date.\n');
    } else await keys(args);
    return 0;
  } catch (error) {
    if (error instanceof AdminError || error instanceof ConfigError || error instanceof DomainError) {
      process.stderr.write(`podplate: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
