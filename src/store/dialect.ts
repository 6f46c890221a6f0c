import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  type ColumnDefinitionBuilder,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  PostgresDialect,
  SqliteDialect,
} from 'kysely';
import pg from 'pg';
import { unavailable } from '../domain/errors.ts';
import type { Tables } from './schema.ts';

// What differs between SQLite and PostgreSQL, and nothing else.

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
  /**
   * A connection of its own, outside the pool and without the statement time limit, for an operator's long work
   * (export, import) beside the service; the caller destroys it.
   */
  dedicated(): Kysely<Tables>;
  /** SQLite: a consistent copy of the database file, taken through SQLite's online backup API while it serves. */
  backup?(file: string): Promise<void>;
  /** How the connections are used, read by /metrics. */
  figures(): PoolFigures | undefined;
  /**
   * SQLite: `PRAGMA data_version` of the connection the service reads on, which moves when another connection
   * commits (never for this one's own commits): the cheap per-request change signal (store/changes.ts).
   */
  dataVersion?(): number;
  /** PostgreSQL: a client of its own, outside the pool, for LISTEN (store/changes.ts); the caller connects and ends it. */
  listener?(applicationName: string): pg.Client;
}

/** PostgreSQL's pool, as /metrics shows it. */
export interface PoolFigures {
  max: number;
  /** Connections open, idle or in use. */
  open: number;
  idle: number;
  /** Callers waiting for a connection right now. */
  waiting: number;
  /** Connections taken from the pool so far, and how many of those had to wait because none was idle. */
  acquired: number;
  waited: number;
  /** Seconds spent waiting for a connection, in all. */
  waitSeconds: number;
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

/** Called as a connection is asked for; what it returns, once it is had (or not). */
type Acquiring = () => (() => void) | undefined;

/**
 * Kysely's dialect, with every error that means the database can't be reached or can't serve right now turned
 * into a domain `unavailable` error (a 503 and a retry later), wherever it arises: a query, a transaction's
 * begin or commit, or taking a connection from the pool. Every other error passes as it is.
 */
function translatingErrors(dialect: Dialect, isUnavailable: (error: unknown) => boolean, onAcquire?: Acquiring): Dialect {
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
        acquireConnection: async () => {
          const done = onAcquire?.();
          try {
            return patch(await guard(driver.acquireConnection()));
          } finally {
            done?.();
          }
        },
        beginTransaction: (c, settings) => guard(driver.beginTransaction(c, settings)),
        commitTransaction: (c) => guard(driver.commitTransaction(c)),
        rollbackTransaction: (c) => guard(driver.rollbackTransaction(c)),
        releaseConnection: (c) => driver.releaseConnection(c),
        destroy: () => driver.destroy(),
      };
    },
  };
}

const sqliteUnavailable = (e: unknown) => code(e) === 'SQLITE_BUSY' || code(e) === 'SQLITE_CANTOPEN' || code(e) === 'SQLITE_IOERR';

/**
 * Creates the database's folder (0700, and any missing folder above it) and file (0600) if they don't exist yet: the
 * file holds every template's env values, and SQLite gives the -wal and -shm files it makes the database file's mode.
 * A folder or file that exists keeps its mode: the operator chose it (`sqliteFilesOpenToOthers` tells).
 */
function createPrivately(file: string): void {
  mkdirSync(dirname(resolve(file)), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(file, 'wx', 0o600));
  } catch (error) {
    if (code(error) !== 'EEXIST') throw error;
  }
}

/** The SQLite database's files (the database, -wal, -shm) that other users may read or write: their paths and modes. */
export function sqliteFilesOpenToOthers(databaseUrl: string): { path: string; mode: string }[] {
  const file = sqliteFile(databaseUrl);
  if (file === undefined || file === ':memory:') return [];
  return [file, `${file}-wal`, `${file}-shm`].flatMap((path) => {
    const mode = existsSync(path) ? statSync(path).mode & 0o777 : 0;
    return mode & 0o077 ? [{ path, mode: mode.toString(8).padStart(4, '0') }] : [];
  });
}

/** A connection to the SQLite file, set up as every connection to it must be. */
function openSqlite(file: string, options: SQLite.Options = {}): SQLite.Database {
  const database = new SQLite(file, options);
  if (!options.readonly) database.pragma('journal_mode = WAL');
  // FULL: a write acknowledged to a client survives a power cut, not only a crash of the process.
  database.pragma('synchronous = FULL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  return database;
}

/**
 * Kysely prepares every query anew; preparing costs more than running a lookup by key, so statements are kept.
 * Reuse is safe: better-sqlite3 runs a statement to completion before anything else can use it.
 */
function keepingStatements(database: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  return {
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
}

export function sqliteDialect(file: string): SqlDialect {
  if (file !== ':memory:') createPrivately(file);
  const database = openSqlite(file);
  const cached = keepingStatements(database);
  const dataVersion = database.prepare('pragma data_version').pluck();
  return {
    name: 'sqlite',
    kysely: translatingErrors(new SqliteDialect({ database: cached }), sqliteUnavailable),
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
        throw sqliteUnavailable(error) ? unavailableBecause(error) : error;
      }
    },
    dedicated: () =>
      new Kysely<Tables>({
        dialect: translatingErrors(new SqliteDialect({ database: keepingStatements(openSqlite(file)) }), sqliteUnavailable),
      }),
    backup: async (target) => {
      const source = openSqlite(file, { readonly: true, fileMustExist: true });
      try {
        // The first step only counts the pages; the next copies all of them in one read transaction, so the copy is
        // one consistent state even while other connections write (a copy made in steps restarts at every write).
        await source.backup(target, { progress: () => 0x7fffffff });
      } finally {
        source.close();
      }
    },
    figures: () => undefined,
    dataVersion: () => dataVersion.get() as number,
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

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    typeParsers[oid] ?? pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const LISTENER_QUERY_TIMEOUT_MS = 2000;

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
    types,
  });
  const waits = { acquired: 0, waited: 0, waitSeconds: 0 };
  // Counted as a connection is asked for: whether none was idle, and how long it took to have one.
  const acquiring: Acquiring = () => {
    waits.acquired++;
    if (pool.idleCount > 0 || pool.totalCount < options.poolSize) return undefined;
    waits.waited++;
    const started = performance.now();
    return () => {
      waits.waitSeconds += (performance.now() - started) / 1000;
    };
  };
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
    kysely: translatingErrors(new PostgresDialect({ pool }), isUnavailable, acquiring),
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
    dedicated: () => {
      const own = new pg.Pool({ connectionString, max: 1, connectionTimeoutMillis: options.connectionTimeoutMs, keepAlive: true, types });
      // As for the pool's: a backend that dies fails the query in flight, which reports it; unheard, it would crash.
      own.on('error', () => {});
      own.on('connect', (client) => client.on('error', () => {}));
      return new Kysely<Tables>({ dialect: translatingErrors(new PostgresDialect({ pool: own }), isUnavailable) });
    },
    listener: (applicationName) => {
      // A heartbeat query that gets no answer within the time limit ends the client, as a lost connection does.
      const client = new pg.Client({
        connectionString,
        application_name: applicationName,
        keepAlive: true,
        connectionTimeoutMillis: options.connectionTimeoutMs,
        query_timeout: LISTENER_QUERY_TIMEOUT_MS,
      });
      return client;
    },
    figures: () => ({
      max: options.poolSize,
      open: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      ...waits,
    }),
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
