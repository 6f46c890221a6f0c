import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import type { SqlDialect } from '../dialect.ts';
import type { Tables } from '../schema.ts';
import { WRITTEN_SETTING } from './change-names.ts';
import type { ReadCache } from './read-cache.ts';

// How a process hears what the database's triggers say changed (cache/change-names.ts), and tells its read cache:
// what other processes changed, and what it changed itself.

/** What a change watch must be stopped with. */
export interface ChangeWatch {
  stop(): Promise<void>;
  /** SQLite: this process committed a transaction; its changes are read before the cache answers again. */
  wroteHere(): void;
  /** PostgreSQL: the backend pid of the listening connection while it is connected (tests terminate it). */
  readonly listenerPid?: number;
}

/** A change watch reads at most this many named changes at once; past that it drops the whole cache instead. */
const MOST_CHANGES_READ = 1000;

/**
 * SQLite: before the first lookup of each turn of the event loop the cache asks whether another connection committed
 * (`PRAGMA data_version` of the reading connection, a few microseconds). If one did, the rows of `cache_changes` after the last one read name what
 * changed. They are read only outside a transaction (inside one, this connection would see rows that may yet be rolled
 * back): meanwhile the lookups read through. A gap in the rows (purged before this process read them) or too many of
 * them drop the whole cache.
 */
export function watchSqliteChanges(dialect: SqlDialect, cache: ReadCache): ChangeWatch {
  const dataVersion = dialect.dataVersion as () => number;
  const readNow = dialect.readNow as NonNullable<SqlDialect['readNow']>;
  const highest = () =>
    readNow(`select coalesce((select seq from sqlite_sequence where name = 'cache_changes'), 0) as hi`, [])?.[0] as
      | { hi: number }
      | undefined;
  const start = highest();
  if (!start) throw new Error('the change watch must start outside a transaction');
  let version = dataVersion();
  let seen = start.hi;
  // Asked once per turn of the event loop, not per lookup: the requests a turn answers (often dozens under load, two
  // lookups each) share one read of the signal, which took 12 % of a busy server's CPU read per lookup.
  let askedThisTurn = false;
  const nextTurn = () => {
    askedThisTurn = false;
  };
  cache.current = () => {
    if (askedThisTurn) return true;
    const now = dataVersion();
    if (now !== version && !caughtUp(now)) return false;
    askedThisTurn = true;
    setImmediate(nextTurn);
    return true;
  };
  /** Reads the changes after the last one read, and forgets what they name; false while inside a transaction. */
  const caughtUp = (now: number): boolean => {
    const top = highest();
    if (!top) return false;
    if (top.hi > seen) {
      const rows = readNow('select seq, name from cache_changes where seq > ? order by seq limit ?', [seen, MOST_CHANGES_READ + 1]) as {
        seq: number;
        name: string;
      }[];
      if (rows.length > MOST_CHANGES_READ || rows[0]?.seq !== seen + 1) cache.flush();
      else for (const row of rows) cache.forget(row.name);
      seen = top.hi;
    }
    version = now;
    return true;
  };
  cache.setTrusted(true);
  return {
    // Its own commits don't move this connection's data_version: as if another connection had written, the next
    // lookup reads the changes first (or reads through, inside a transaction).
    wroteHere: () => {
      version = Number.NaN;
      askedThisTurn = false;
    },
    stop: async () => {
      cache.setTrusted(false);
      cache.current = () => true;
    },
  };
}

/** PostgreSQL: the names of what the transaction `trx` changed, as its triggers told it (see change-names.ts). */
export async function changesWritten(trx: Kysely<Tables>): Promise<string | undefined> {
  const { rows } = await sql<{ written: string | null }>`select current_setting(${WRITTEN_SETTING}, true) as written`.execute(trx);
  return rows[0]?.written || undefined;
}

/** How often the listening connection is asked a trivial query: a connection lost without a word is noticed so. */
const HEARTBEAT_MS = 5000;
const RETRY_FIRST_MS = 100;
const RETRY_MOST_MS = 5000;

/**
 * PostgreSQL: one connection per process LISTENs on its schema's channel; every notification names a change. The
 * cache is trusted only while that connection is listening: when it errors or ends (a terminated backend, a restart,
 * a heartbeat unanswered) the cache is dropped and read through, and the connection is made again, with backoff; once
 * it listens again the cache starts empty and is trusted. Resolves once the first attempt has listened or failed.
 */
export async function listenForChanges(dialect: SqlDialect, cache: ReadCache, applicationName: string): Promise<ChangeWatch> {
  const open = dialect.listener as NonNullable<SqlDialect['listener']>;
  let client: pg.Client | undefined;
  let stopped = false;
  let retryMs = RETRY_FIRST_MS;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let pid: number | undefined;

  const lost = (which: pg.Client) => {
    if (which !== client) return;
    client = undefined;
    pid = undefined;
    cache.setTrusted(false);
    clearInterval(heartbeat);
    which.end().catch(() => {});
    if (stopped) return;
    retry = setTimeout(() => void connect(), retryMs);
    retry.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MOST_MS);
  };

  const connect = async (): Promise<void> => {
    const own = open(applicationName);
    client = own;
    own.on('error', () => lost(own));
    own.on('end', () => lost(own));
    try {
      await own.connect();
      const { rows } = await own.query<{ channel: string; pid: number }>(
        `select 'podplate_' || md5(current_schema()) as channel, pg_backend_pid() as pid`,
      );
      const { channel, pid: backend } = rows[0] as { channel: string; pid: number };
      own.on('notification', (message) => {
        if (message.channel === channel && client === own) cache.forget(message.payload ?? '*');
      });
      await own.query(`listen "${channel}"`);
      if (client !== own || stopped) return;
      pid = backend;
      retryMs = RETRY_FIRST_MS;
      // Whatever changed before the LISTEN was not heard: the cache starts empty.
      cache.setTrusted(true);
      heartbeat = setInterval(() => own.query('select 1').catch(() => lost(own)), HEARTBEAT_MS);
      heartbeat.unref();
    } catch {
      lost(own);
    }
  };

  await connect();
  return {
    get listenerPid() {
      return pid;
    },
    // Its own changes were told to the writer in its transaction (changesWritten).
    wroteHere: () => {},
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const last = client;
      client = undefined;
      cache.setTrusted(false);
      await last?.end().catch(() => {});
    },
  };
}
