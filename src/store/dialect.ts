import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { type ColumnDefinitionBuilder, type DatabaseConnection, type Dialect, type Driver, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { unavailable } from '../domain/errors.ts';

/** What differs between the databases Podplate runs on. Everything else is written once, in the store. */
export interface SqlDialect {
  name: 'sqlite' | 'postgres';
  /** Kysely's dialect; every error meaning "the database can't serve now" leaves it as a domain `unavailable` error. */
  kysely: Dialect;
  timestampType: 'text' | 'timestamptz';
  serialType: 'integer' | 'bigint';
  serialPrimaryKey(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /** The error is a unique-constraint violation. */
  isUniqueViolation(error: unknown): boolean;
  /** Marks a query text as worth preparing once per connection (PostgreSQL); it must name its columns. */
  prepare?(sql: string): void;
  /**
   * Runs a read at once (SQLite, whose queries are synchronous) when no transaction holds the connection: the
   * rows, without Kysely's connection queue and promises. Undefined when it can't; the query then goes the usual way.
   */
  readNow?(sql: string, parameters: readonly unknown[]): unknown[] | undefined;
}

export interface PoolOptions {
  /** Most connections one process holds (PostgreSQL). */
  poolSize: number;
  /** A statement running longer than this is cancelled (PostgreSQL). */
  statementTimeoutMs: number;
  /** Waiting longer than this for a connection fails the request with 503 (PostgreSQL). */
  connectionTimeoutMs: number;
}

export const DEFAULT_POOL: PoolOptions = { poolSize: 10, statementTimeoutMs: 5000, connectionTimeoutMs: 5000 };

const code = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

const unavailableBecause = (cause: unknown) =>
  Object.assign(unavailable('The database could not serve this request right now; retry shortly.'), { cause });

/**
 * Kysely's dialect, with every error that means the database can't be reached or can't serve right now turned
 * into a domain `unavailable` error (a 503 and a retry later), wherever it arises: a query, a transaction's
 * begin or commit, or taking a connection from the pool. Every other error passes as it is.
 */
function translatingErrors(dialect: Dialect, isUnavailable: (error: unknown) => boolean): Dialect {
  const translate = (error: unknown) => (isUnavailable(error) ? unavailableBecause(error) : error);
  const guard = <T>(work: Promise<T>): Promise<T> =>
    work.catch((error) => {
      throw translate(error);
    });
  const patched = new WeakSet<DatabaseConnection>();
  const patch = (connection: DatabaseConnection): DatabaseConnection => {
    if (patched.has(connection)) return connection;
    const executeQuery = connection.executeQuery.bind(connection);
    connection.executeQuery = (query) => guard(executeQuery(query));
    patched.add(connection);
    return connection;
  };
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: (): Driver => {
      const driver = dialect.createDriver();
      return {
        init: () => guard(driver.init()),
        acquireConnection: async () => patch(await guard(driver.acquireConnection())),
        beginTransaction: (c, settings) => guard(driver.beginTransaction(c, settings)),
        commitTransaction: (c) => guard(driver.commitTransaction(c)),
        rollbackTransaction: (c) => guard(driver.rollbackTransaction(c)),
        releaseConnection: (c) => driver.releaseConnection(c),
        destroy: () => driver.destroy(),
      };
    },
  };
}

export function sqliteDialect(file: string): SqlDialect {
  if (file !== ':memory:') mkdirSync(dirname(resolve(file)), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  // FULL: a write acknowledged to a client survives a power cut, not only a crash of the process.
  database.pragma('synchronous = FULL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // Kysely prepares every query anew; preparing costs more than running a lookup by key, so statements are kept.
  // Reuse is safe: better-sqlite3 runs a statement to completion before anything else can use it.
  const statements = new Map<string, SQLite.Statement>();
  const isUnavailable = (e: unknown) => code(e) === 'SQLITE_BUSY' || code(e) === 'SQLITE_CANTOPEN' || code(e) === 'SQLITE_IOERR';
  const cached = {
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        if (statements.size >= 1000) statements.clear();
        statement = database.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    close: () => database.close(),
  };
  return {
    name: 'sqlite',
    kysely: translatingErrors(new SqliteDialect({ database: cached }), isUnavailable),
    timestampType: 'text',
    serialType: 'integer',
    serialPrimaryKey: (c) => c.primaryKey().autoIncrement(),
    isUniqueViolation: (e) => code(e) === 'SQLITE_CONSTRAINT_UNIQUE' || code(e) === 'SQLITE_CONSTRAINT_PRIMARYKEY',
    // Inside a transaction (a group commit between its awaits) a read on this connection would see writes not yet
    // committed, so it waits its turn instead. Outside one, a synchronous read can't interleave with anything.
    readNow: (sql, parameters) => {
      if (database.inTransaction) return undefined;
      try {
        const statement = cached.prepare(sql);
        return statement.reader ? statement.all(parameters) : undefined;
      } catch (error) {
        throw isUnavailable(error) ? unavailableBecause(error) : error;
      }
    },
  };
}

// int8 and numeric arrive as strings by default; our values fit a double. Timestamps go out as ISO 8601.
const parseTimestamp = (value: string) => new Date(pg.types.getTypeParser(1184)(value) as Date).toISOString();
const typeParsers: Record<number, (value: string) => unknown> = { 20: Number, 1700: Number, 1184: parseTimestamp };

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown: the backend was terminated
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
  '57014', // query_canceled: the statement timeout struck
  '40P01', // deadlock_detected: one of two transactions was chosen to give way; a retry succeeds
  '40001', // serialization_failure: likewise
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);
const UNAVAILABLE_MESSAGES =
  /is not currently accepting connections|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|cannot use a pool after calling end/i;

/**
 * The store's hot queries (see `SqlDialect.prepare`) run as named prepared statements, parsed and planned once per
 * connection rather than on every call. Only those: their number is fixed, and none selects `*`, so a column added
 * by a later migration can't change a cached plan's result type under a running process.
 */
function preparedStatements(client: pg.PoolClient, named: Map<string, string>): void {
  const query = client.query.bind(client) as (config: pg.QueryConfig | string, values?: unknown[]) => Promise<pg.QueryResult>;
  client.query = ((text: unknown, values?: unknown[]) => {
    const name = typeof text === 'string' ? named.get(text) : undefined;
    return name ? query({ name, text: text as string, values }) : query(text as string, values);
  }) as typeof client.query;
}

export function postgresDialect(connectionString: string, options: PoolOptions): SqlDialect {
  const named = new Map<string, string>();
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectionTimeoutMs,
    statement_timeout: options.statementTimeoutMs,
    query_timeout: options.statementTimeoutMs + 1000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        typeParsers[oid] ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A client whose backend dies emits 'error' (on the pool while idle, on the client while checked out);
  // unheard, that would crash the process. The query in flight fails on its own, and the pool drops the client.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    preparedStatements(client, named);
  });
  const isUnavailable = (e: unknown) =>
    UNAVAILABLE_CODES.has(String(code(e))) || (e instanceof Error && UNAVAILABLE_MESSAGES.test(e.message));
  return {
    name: 'postgres',
    kysely: translatingErrors(new PostgresDialect({ pool }), isUnavailable),
    timestampType: 'timestamptz',
    serialType: 'bigint',
    serialPrimaryKey: (c) => c.primaryKey().generatedAlwaysAsIdentity(),
    isUniqueViolation: (e) => code(e) === '23505',
    prepare: (sql) => {
      if (!named.has(sql)) {
        if (/\bselect\s+(?:[\w".]+\.)?\*/i.test(sql)) throw new Error(`a prepared statement must name its columns: ${sql}`);
        named.set(sql, `pp_${createHash('sha1').update(sql).digest('hex')}`);
      }
    },
  };
}

/** The SQLite file a database URL names (`:memory:` for none), or undefined for PostgreSQL. */
export function sqliteFile(databaseUrl: string): string | undefined {
  return /^postgres(ql)?:\/\//.test(databaseUrl) ? undefined : databaseUrl.replace(/^sqlite:(\/\/)?/, '');
}

/** `sqlite:<path>` (or a bare path) and `postgres://…` / `postgresql://…`. */
export function dialectFor(databaseUrl: string, pool: PoolOptions = DEFAULT_POOL): SqlDialect {
  const file = sqliteFile(databaseUrl);
  return file === undefined ? postgresDialect(databaseUrl, pool) : sqliteDialect(file);
}
