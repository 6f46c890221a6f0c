import { CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import { conflict } from '../../domain/errors.ts';
import type { SqlDialect } from '../dialect.ts';
import { IDEMPOTENCY_RETENTION_MS } from '../idempotency.ts';
import type { Tables } from '../schema.ts';
import { restoreIndexes, setIndexesAside } from './bulk-indexes.ts';

// The whole install, table by table: read in one consistent snapshot (export), written into an empty database in
// one transaction (import). Rows travel as their columns' values, as stored: nothing is rebuilt on the way.

/** What a column holds, as an export writes it and an import checks it. */
export type ColumnKind = 'serial' | 'integer' | 'integer?' | 'number' | 'text' | 'text?' | 'timestamp' | 'timestamp?';

export interface DumpTable {
  name: keyof Tables & string;
  /** Every column, in the order a row's values are written. */
  columns: readonly string[];
  kinds: readonly ColumnKind[];
  /** A unique key, read in its order: the export walks the table down it, a page at a time. */
  key: readonly string[];
  /** Only rows written since this long ago are kept (what is older has expired). */
  retentionMs?: number;
}

/** A table's spec: every column of `Tables[T]` must be given its kind, or this fails to compile. */
function table<T extends keyof Tables & string>(
  name: T,
  columns: { [C in keyof Tables[T] & string]-?: ColumnKind },
  key: readonly (keyof Tables[T] & string)[],
  options: { retentionMs?: number } = {},
): DumpTable {
  return { name, columns: Object.keys(columns), kinds: Object.values(columns), key, ...options };
}

const TIMESTAMPS = { created_at: 'timestamp', updated_at: 'timestamp' } as const;

// Every table of the install, in the order an import writes them (a table comes after those its rows refer to).
// A table added later is one entry here, or one in DERIVED_TABLES.
export const DUMP_TABLES = [
  table('accounts', { id: 'text', name: 'text', role: 'text', created_at: 'timestamp', name_key: 'text?' }, ['id']),
  table(
    'api_keys',
    {
      id: 'text',
      account_id: 'text',
      digest: 'text',
      prefix: 'text',
      created_at: 'timestamp',
      revoked_at: 'timestamp?',
      label: 'text',
      access: 'text',
      expires_at: 'timestamp?',
    },
    ['id'],
  ),
  table(
    'templates',
    {
      seq: 'serial',
      id: 'text',
      owner_id: 'text',
      endpoint_id: 'text?',
      name: 'text',
      image_name: 'text',
      category: 'text',
      container_disk_in_gb: 'integer',
      volume_in_gb: 'integer',
      volume_mount_path: 'text',
      container_registry_auth_id: 'text',
      docker_entrypoint: 'text',
      docker_start_cmd: 'text',
      env: 'text',
      ports: 'text',
      readme: 'text',
      is_public: 'integer',
      is_platform: 'integer',
      is_serverless: 'integer',
      earned: 'number',
      runtime_in_min: 'integer',
      revision: 'integer',
      ...TIMESTAMPS,
      search: 'text',
      body: 'text?',
      name_key: 'text?',
      image_check_status: 'text',
      image_checked_at: 'timestamp?',
      image_digest: 'text?',
      image_platforms: 'text',
      image_size_bytes: 'integer?',
      image_cuda_version: 'text?',
      image_check_reason: 'text?',
      image_check_due_at: 'timestamp?',
      image_check_attempts: 'integer',
      image_check_leased_until: 'timestamp?',
      image_check_lease: 'text?',
      image_check_revision: 'integer',
    },
    ['seq'],
  ),
  table(
    'endpoints',
    {
      seq: 'serial',
      id: 'text',
      owner_id: 'text',
      name: 'text',
      template_id: 'text',
      workers_min: 'integer',
      workers_max: 'integer',
      version: 'integer',
      ...TIMESTAMPS,
      name_key: 'text?',
    },
    ['seq'],
  ),
  table(
    'template_revisions',
    {
      template_id: 'text',
      revision: 'integer',
      snapshot: 'text',
      diff: 'text',
      key_id: 'text',
      created_at: 'timestamp',
      image_digest: 'text?',
    },
    ['template_id', 'revision'],
  ),
  table(
    'releases',
    {
      seq: 'serial',
      id: 'text',
      endpoint_id: 'text',
      version: 'integer',
      template_id: 'text',
      template_revision: 'integer',
      diff: 'text',
      status: 'text',
      workers_updated: 'integer',
      workers_total: 'integer',
      ...TIMESTAMPS,
      previous_template_id: 'text?',
      image_digest: 'text?',
    },
    ['seq'],
  ),
  table(
    'outbox',
    {
      seq: 'serial',
      event_id: 'text',
      type: 'text',
      subject_id: 'text',
      ordering_key: 'text',
      payload: 'text',
      created_at: 'timestamp',
      attempts: 'integer',
      next_attempt_at: 'timestamp',
      leased_until: 'timestamp?',
      lease_token: 'text?',
      last_error: 'text?',
      delivered_at: 'timestamp?',
      account_id: 'text?',
    },
    ['seq'],
  ),
  table(
    'idempotency_keys',
    {
      account_id: 'text',
      key: 'text',
      request_hash: 'text',
      status: 'integer',
      headers: 'text',
      body: 'text',
      created_at: 'timestamp',
      answer: 'text?',
      body_digest: 'text?',
    },
    ['account_id', 'key'],
    { retentionMs: IDEMPOTENCY_RETENTION_MS },
  ),
  table('usage_reports', { usage_id: 'text', template_id: 'text', runtime_in_min: 'integer', earned: 'number', created_at: 'timestamp' }, [
    'usage_id',
  ]),
  // Passwords travel sealed, as stored: the importing install needs the same SECRETS_KEY (docs/security.md).
  table(
    'registry_auths',
    {
      seq: 'serial',
      id: 'text',
      owner_id: 'text',
      name: 'text',
      username: 'text',
      password: 'text',
      created_at: 'timestamp',
      name_key: 'text?',
    },
    ['seq'],
  ),
  table('secret_key_check', { id: 'text', sealed: 'text' }, ['id']),
  // Secrets too: sealed, as stored.
  table(
    'secrets',
    { seq: 'serial', id: 'text', owner_id: 'text', name: 'text', value: 'text', created_at: 'timestamp', updated_at: 'timestamp' },
    ['seq'],
  ),
] as const satisfies readonly DumpTable[];

/**
 * Tables an export leaves out, because the importing database makes them itself: what accounts hold is counted by
 * triggers as the rows arrive (migration 0005), rate-limit buckets are full again by the time anyone looks, and when
 * each key was last used is noted again as it is used (a key's `lastUsedAt` starts afresh in the copy).
 */
export const DERIVED_TABLES = ['account_usage', 'rate_buckets', 'api_key_uses'] as const satisfies readonly (keyof Tables)[];

// A table of `Tables` missing from DUMP_TABLES fails to compile here: none is left behind by an export unnoticed.
type Dumped = (typeof DUMP_TABLES)[number]['name'];
const everyTableDumped: Exclude<keyof Tables, Dumped | (typeof DERIVED_TABLES)[number]> extends never ? true : never = true;
void everyTableDumped;

const ISO_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Why `value` can't be a value of a column of `kind`; undefined when it can. */
export function kindMismatch(kind: ColumnKind, value: unknown): string | undefined {
  const nullable = kind.endsWith('?');
  if (value === null) return nullable ? undefined : 'must not be null';
  switch (kind) {
    case 'serial':
    case 'integer':
    case 'integer?':
      return Number.isSafeInteger(value) ? undefined : 'must be an integer';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
    case 'text':
    case 'text?':
      return typeof value === 'string' ? undefined : 'must be a string';
    default:
      return typeof value === 'string' && ISO_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value))
        ? undefined
        : 'must be a timestamp like 2026-11-22T19:40:00.000Z';
  }
}

/** A row the database refused, by its place in the batch given. */
export class RowRejected extends Error {
  readonly index: number;

  constructor(index: number, cause: unknown) {
    super((cause as Error).message, { cause });
    this.index = index;
  }
}

/** The install as it was at one moment, read table by table. */
export interface DumpReader {
  readonly dialect: SqlDialect['name'];
  /** The rows of `table` an export holds. */
  count(table: DumpTable): Promise<number>;
  /** Those rows, a page at a time, each row its values in `table.columns` order. */
  pages(table: DumpTable, size: number): AsyncGenerator<unknown[][]>;
}

/** An empty install being written, in one transaction. */
export interface DumpWriter {
  /** Inserts rows (values in `table.columns` order) as they are, identity columns included; RowRejected names a refused one. */
  insert(table: DumpTable, rows: unknown[][]): Promise<void>;
  /** The most rows one insert of `table` takes. */
  rowsPerInsert(table: DumpTable): number;
}

const identityOf = (t: DumpTable) => t.columns.filter((_, i) => t.kinds[i] === 'serial');

/**
 * Reads the install in one consistent snapshot, on a connection of its own so that the service goes on meanwhile:
 * one REPEATABLE READ, read-only transaction on PostgreSQL; one read transaction on SQLite (WAL keeps its snapshot).
 */
export async function readSnapshot<T>(dialect: SqlDialect, read: (reader: DumpReader) => Promise<T>): Promise<T> {
  const db = dialect.dedicated();
  try {
    return await db.connection().execute(async (connection) => {
      if (dialect.name === 'postgres') await sql`begin isolation level repeatable read, read only`.execute(connection);
      else await sql`begin`.execute(connection);
      try {
        // What expires is measured from the snapshot's start, the same for the count and the rows.
        const at = Date.now();
        const filter = (t: DumpTable) =>
          t.retentionMs === undefined ? undefined : sql`created_at >= ${new Date(at - t.retentionMs).toISOString()}`;
        const result = await read({
          dialect: dialect.name,
          count: async (t) => {
            const where = filter(t);
            const query = sql<{
              n: number | string;
            }>`select count(*) as n from ${sql.table(t.name)} ${where ? sql`where ${where}` : sql``}`;
            return Number((await query.execute(connection)).rows[0]?.n ?? 0);
          },
          pages: (t, size) => pages(connection, t, size, filter(t)),
        });
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => {});
        throw error;
      }
    });
  } finally {
    await db.destroy();
  }
}

/** A page of an export holds at most this many bytes of text (and at least one row): memory follows bytes, not rows. */
export const PAGE_BYTES = 8 * 1024 * 1024;

/**
 * A table's rows down its key, a page at a time: at most `size` rows and, past its first row, PAGE_BYTES of text.
 * Each page's rows are chosen by their key and the size of their text alone (read from each value's length, not the
 * value: PostgreSQL's octet_length leaves a stored value as it is), and only those fetched whole.
 */
async function* pages(db: Kysely<Tables>, t: DumpTable, size: number, filter?: RawBuilder<unknown>): AsyncGenerator<unknown[][]> {
  const keyRefs = t.key.map((c) => sql.ref(c));
  const key = sql.join(keyRefs);
  const keyAt = t.key.map((c) => t.columns.indexOf(c));
  const texts = t.columns.filter((_, i) => t.kinds[i]?.startsWith('text'));
  const bytes = sql.join([...texts.map((c) => sql`coalesce(octet_length(${sql.ref(c)}), 0)`), sql`64`], sql` + `);
  const columns = sql.join(t.columns.map((c) => sql`t.${sql.ref(c)}`));
  const joined = sql.join(
    t.key.map((c) => sql`t.${sql.ref(c)} = s.${sql.ref(c)}`),
    sql` and `,
  );
  let after: unknown[] | undefined;
  for (;;) {
    const where = [...(filter ? [filter] : []), ...(after ? [sql`(${key}) > (${sql.join(after)})`] : [])];
    const query = sql<Record<string, unknown>>`with candidates as (
        select ${key}, ${bytes} as bytes from ${sql.table(t.name)}
        ${where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``} order by ${key} limit ${size}),
      sized as (select ${key}, sum(bytes) over (order by ${key} rows between unbounded preceding and current row) as running,
        row_number() over (order by ${key}) as rank from candidates)
      select ${columns} from sized s join ${sql.table(t.name)} t on ${joined}
      where s.rank = 1 or s.running <= ${PAGE_BYTES} order by ${sql.join(t.key.map((c) => sql`t.${sql.ref(c)}`))}`;
    const { rows } = await query.execute(db);
    if (rows.length === 0) return;
    const values = rows.map((row) => t.columns.map((c) => row[c]));
    yield values;
    const last = values[values.length - 1] as unknown[];
    after = keyAt.map((i) => last[i]);
  }
}

/**
 * Writes an install into this database, which must hold no data, in one transaction on a connection of its own:
 * everything `write` inserts lands, or nothing (on any error, or if `write` throws). PostgreSQL's identity columns
 * take the values given, and their sequences are moved past the highest afterwards.
 */
export async function writeRestore<T>(dialect: SqlDialect, write: (writer: DumpWriter) => Promise<T>): Promise<T> {
  const db = dialect.dedicated();
  const postgres = dialect.name === 'postgres';
  try {
    const result = await db.connection().execute(async (connection) => {
      await sql.raw(postgres ? 'begin' : 'begin immediate').execute(connection);
      try {
        if (postgres) {
          // Nobody else writes these tables until the import commits or fails.
          await sql`lock table ${sql.join(DUMP_TABLES.map((t) => sql.table(t.name)))} in exclusive mode`.execute(connection);
        }
        const held = await heldTables(connection);
        if (held.length > 0) throw notEmpty(held);
        // The tables are empty and locked: their secondary indexes are built once after the load, not row by row.
        const aside = postgres
          ? await setIndexesAside(
              connection,
              DUMP_TABLES.map((t) => t.name),
            )
          : [];
        const result = await write({
          insert: (t, rows) => insertRows(connection, dialect, t, rows),
          // SQLite takes at most 32,766 parameters a statement; PostgreSQL's arrays have no such bound.
          rowsPerInsert: (t) => (postgres ? 2000 : Math.min(1000, Math.floor(30_000 / t.columns.length))),
        });
        await restoreIndexes(connection, aside);
        if (postgres) {
          for (const t of DUMP_TABLES) {
            for (const column of identityOf(t)) {
              const highest = sql`max(${sql.ref(column)})`;
              await sql`select setval(pg_get_serial_sequence(${t.name}, ${column}), coalesce(${highest}, 1), ${highest} is not null)
                from ${sql.table(t.name)}`.execute(connection);
            }
          }
        }
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => {});
        throw error;
      }
    });
    // Fresh statistics for the planner, rather than waiting for autovacuum to notice a million new rows.
    if (postgres) for (const t of DUMP_TABLES) await sql`analyze ${sql.table(t.name)}`.execute(db);
    return result;
  } finally {
    await db.destroy();
  }
}

/** The tables that hold a row; a table that does not exist (yet) holds none. */
export async function heldTables(db: Kysely<Tables>): Promise<string[]> {
  const held: string[] = [];
  for (const t of DUMP_TABLES) {
    const exists = await sql`select 1 as one from ${sql.table(t.name)} limit 1`.execute(db).then(
      ({ rows }) => rows.length > 0,
      () => false,
    );
    if (exists) held.push(t.name);
  }
  return held;
}

export const notEmpty = (held: string[]) =>
  conflict(`The database already holds data (in ${held.join(', ')}); an import needs an empty one. Nothing was changed.`);

/** PostgreSQL's type for each kind, for the arrays an insert unnests. */
const ARRAY_TYPES: Record<ColumnKind, string> = {
  serial: 'bigint[]',
  integer: 'bigint[]',
  'integer?': 'bigint[]',
  number: 'double precision[]',
  text: 'text[]',
  'text?': 'text[]',
  timestamp: 'timestamptz[]',
  'timestamp?': 'timestamptz[]',
};

/** Insert statements by table (and, on SQLite, row count): built once, they are the same for every full batch. */
const insertTexts = new Map<string, string>();

/**
 * One statement for many rows: on PostgreSQL, one array per column, unnested (a statement of a few parameters,
 * planned quickly whatever the number of rows); on SQLite, a multi-row VALUES.
 */
function insertStatement(dialect: SqlDialect, t: DumpTable, rows: unknown[][]): CompiledQuery {
  const postgres = dialect.name === 'postgres';
  const cacheKey = `${dialect.name}:${t.name}:${postgres ? '' : rows.length}`;
  let text = insertTexts.get(cacheKey);
  if (!text) {
    const columns = t.columns.map((c) => `"${c}"`).join(', ');
    if (postgres) {
      const overriding = identityOf(t).length > 0 ? ' overriding system value' : '';
      const arrays = t.kinds.map((kind, i) => `$${i + 1}::${ARRAY_TYPES[kind]}`).join(', ');
      text = `insert into "${t.name}" (${columns})${overriding} select * from unnest(${arrays})`;
    } else {
      const row = `(${t.columns.map(() => '?').join(', ')})`;
      text = `insert into "${t.name}" (${columns}) values ${Array.from({ length: rows.length }, () => row).join(', ')}`;
    }
    insertTexts.set(cacheKey, text);
  }
  const parameters = postgres ? t.columns.map((_, c) => rows.map((row) => row[c])) : rows.flat();
  return CompiledQuery.raw(text, parameters);
}

/**
 * Inserts the rows in one statement, inside a savepoint; if the database refuses it, they are tried one at a time
 * to find the row it refused (RowRejected). The transaction stays usable: the savepoint undoes the failed statement.
 */
async function insertRows(db: Kysely<Tables>, dialect: SqlDialect, t: DumpTable, rows: unknown[][]): Promise<void> {
  if (rows.length === 0) return;
  const run = (batch: unknown[][]) => db.executeQuery(insertStatement(dialect, t, batch));
  await sql`savepoint restore_batch`.execute(db);
  try {
    await run(rows);
    await sql`release restore_batch`.execute(db);
    return;
  } catch (error) {
    await sql`rollback to restore_batch`.execute(db);
    if (rows.length === 1) {
      await sql`release restore_batch`.execute(db);
      throw new RowRejected(0, error);
    }
  }
  for (const [index, row] of rows.entries()) {
    try {
      await run([row]);
    } catch (error) {
      await sql`rollback to restore_batch`.execute(db);
      await sql`release restore_batch`.execute(db);
      throw new RowRejected(index, error);
    }
  }
  await sql`release restore_batch`.execute(db);
}
