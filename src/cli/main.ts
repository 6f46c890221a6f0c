import { parseArgs } from 'node:util';
import { ConfigError, readConfig } from '../config.ts';
import type { Role } from '../domain/visibility.ts';
import { now } from '../registry/ids.ts';
import { createApiKey, KeyError } from '../registry/keys.ts';
import { serve } from '../server.ts';
import { dialectFor } from '../store/dialect.ts';
import { Store } from '../store/store.ts';

const USAGE = `Usage: podplate <command>

Commands:
  serve                                   Serve the API (as npm start does)
  migrate                                 Bring the database schema up to date
  keys create --user <name> [--role platform]
                                          Create an API key; prints the key alone on stdout
  keys list                               List API keys (never their secret)
  keys revoke <key-id>                    Revoke a key

Every command reads DATABASE_URL (default sqlite:./data/podplate.db).

Examples:
  podplate keys create --user alice
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/podplate podplate migrate
`;

class UsageError extends Error {}

async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const config = readConfig();
  const store = Store.open(
    dialectFor(config.DATABASE_URL, {
      poolSize: 2,
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
      connectionTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
    }),
  );
  try {
    await store.migrate();
    return await work(store);
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
    const key = await withStore((store) => createApiKey(store, values.user as string, values.role as Role));
    process.stderr.write(`Created key ${key.id} for ${key.account} (${key.role}). It is shown once:\n`);
    process.stdout.write(`${key.secret}\n`);
    return;
  }
  if (action === 'list') {
    parseArgs({ args: rest, options: {} });
    const rows = await withStore((store) => store.listApiKeys());
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
    const revoked = await withStore((store) => store.revokeApiKey(id, now()));
    if (!revoked) throw new KeyError(`no active key ${id}`);
    process.stderr.write(`Revoked key ${id}.\n`);
    return;
  }
  throw new UsageError(`unknown keys command ${action ?? ''}`.trim());
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  try {
    switch (command) {
      case 'serve':
        await serve();
        return 0;
      case 'migrate':
        await withStore(async () => undefined);
        process.stderr.write('The database schema is up to date.\n');
        return 0;
      case 'keys':
        await keys(args);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${command}`);
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`podplate: ${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof KeyError || error instanceof ConfigError) {
      process.stderr.write(`podplate: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
