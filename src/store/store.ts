import { Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { type AccountReads, AccountRepository } from './accounts.ts';
import { type ChangeWatch, changesWritten, listenForChanges, watchSqliteChanges } from './cache/changes.ts';
import { type CacheFigures, type CacheOptions, ReadCache } from './cache/read-cache.ts';
import { Core } from './core.ts';
import type { PoolFigures, SqlDialect } from './dialect.ts';
import { type DumpReader, type DumpWriter, heldTables, readSnapshot, writeRestore } from './dump/dump.ts';
import { type EndpointReads, EndpointRepository } from './endpoints.ts';
import { type IdempotencyReads, IdempotencyRepository } from './idempotency.ts';
import { COMPATIBILITY_RECORD, declared, KYSELY_MIGRATIONS, migrations } from './migrations/index.ts';
import { type OutboxReads, OutboxRepository } from './outbox.ts';
import { type RateBucketReads, RateBucketRepository } from './rate-buckets.ts';
import { type RegistryAuthReads, RegistryAuthRepository } from './registry-auths.ts';
import type { Tables } from './schema.ts';
import { type SealedReads, SealedRepository } from './sealed.ts';
import { type SecretReads, SecretRepository } from './secrets.ts';
import { type ImageCheckReads, ImageCheckRepository } from './templates/image-checks.ts';
import { type TemplateReads, TemplateRepository } from './templates/templates.ts';
import { GroupCommit, type GroupSizes } from './transactions/group-commit.ts';
import { assertOutside, Scope, within, withTimeLimit } from './transactions/scope.ts';
import { type UsageReads, UsageRepository } from './usage.ts';

// The store: one repository per aggregate, over one Kysely core, on SQLite or PostgreSQL through a SqlDialect.

/** Every aggregate's repository, reads and writes: what a transaction has. */
export abstract class Repositories {
  readonly templates: TemplateRepository;
  readonly accounts: AccountRepository;
  readonly endpoints: EndpointRepository;
  readonly outbox: OutboxRepository;
  readonly idempotency: IdempotencyRepository;
  readonly usage: UsageRepository;
  readonly rateBuckets: RateBucketRepository;
  readonly registryAuths: RegistryAuthRepository;
  readonly sealed: SealedRepository;
  readonly secrets: SecretRepository;
  readonly imageChecks: ImageCheckRepository;

  protected constructor(core: Core) {
    this.templates = new TemplateRepository(core);
    this.accounts = new AccountRepository(core);
    this.endpoints = new EndpointRepository(core);
    this.outbox = new OutboxRepository(core);
    this.idempotency = new IdempotencyRepository(core);
    this.usage = new UsageRepository(core);
    this.rateBuckets = new RateBucketRepository(core);
    this.registryAuths = new RegistryAuthRepository(core);
    this.sealed = new SealedRepository(core);
    this.secrets = new SecretRepository(core);
    this.imageChecks = new ImageCheckRepository(core);
  }
}

/** What the root store offers of every repository: its reads. A write exists only on a transaction. */
export interface Reads {
  readonly templates: TemplateReads;
  readonly accounts: AccountReads;
  readonly endpoints: EndpointReads;
  readonly outbox: OutboxReads;
  readonly idempotency: IdempotencyReads;
  readonly usage: UsageReads;
  readonly rateBuckets: RateBucketReads;
  readonly registryAuths: RegistryAuthReads;
  readonly sealed: SealedReads;
  readonly secrets: SecretReads;
  readonly imageChecks: ImageCheckReads;
}

/**
 * One open transaction: the value handed to the code that runs in it, with every repository's writes. It has no way
 * to open another, and while it is open the root store refuses to be used from the code running in it (see scope.ts).
 */
export class Transaction extends Repositories {
  /** @internal Made by `Store.transaction` only. */
  constructor(core: Core) {
    super(core);
  }
}

/** The root store's repositories: built whole, and offered as their reads alone (Reads). */
class RootRepositories extends Repositories {
  constructor(core: Core) {
    super(core);
  }
}

/** A migration the database has had, and what it recorded. */
export interface AppliedMigration {
  name: string;
  appliedAt: string;
  /** This version knows it (false: a newer version ran it). */
  known: boolean;
  /** Whether processes of the version before it may serve beside it, as recorded when it ran (null: ran before records). */
  compatible: boolean | null;
}

export interface MigrationState {
  applied: AppliedMigration[];
  /** This version's migrations the database has not had, in order. */
  pending: string[];
}

/**
 * The database holds migrations of a newer version that are not all recorded as compatible with older processes: this
 * process may not serve it, nor migrate it.
 */
export class NewerSchema extends Error {
  readonly newer: AppliedMigration[];
  readonly refused: AppliedMigration[];

  constructor(newer: AppliedMigration[], refused: AppliedMigration[], pending: string[], latest: string) {
    const names = (ms: AppliedMigration[]) => ms.map((m) => m.name).join(', ');
    super(
      refused.length > 0
        ? `the database was migrated by a newer version of Podplate (${names(newer)}; this version knows up to ${latest}), and ` +
            `${names(refused)} ${refused.length === 1 ? 'is' : 'are'} not recorded as safe for older processes to serve beside: run the ` +
            'newer version, or restore the backup taken before the upgrade to come back to this one (docs/operations.md#upgrading)'
        : `the database has migrations of a newer version (${names(newer)}) but lacks this version's ${pending.join(', ')}: run the newer version`,
    );
    this.name = 'NewerSchema';
    this.newer = newer;
    this.refused = refused;
  }
}

export interface StoreOptions {
  /** A transaction holding the database longer than this fails as unavailable (a 503) and is rolled back. */
  transactionTimeoutMs: number;
}

export const DEFAULT_STORE_OPTIONS: StoreOptions = { transactionTimeoutMs: 5000 };

/** How the database is being used, as /metrics shows it: read when scraped, so the store knows nothing of metrics. */
export interface DatabaseFigures {
  dialect: SqlDialect['name'];
  /** PostgreSQL: the connection pool. */
  pool?: PoolFigures;
  /** SQLite: how many transactions each group commit carried. */
  groupCommits?: GroupSizes;
  /** The read cache (see read-cache.ts). */
  cache: CacheFigures;
}

export class Store implements Reads {
  readonly templates: TemplateReads;
  readonly accounts: AccountReads;
  readonly endpoints: EndpointReads;
  readonly outbox: OutboxReads;
  readonly idempotency: IdempotencyReads;
  readonly usage: UsageReads;
  readonly rateBuckets: RateBucketReads;
  readonly registryAuths: RegistryAuthReads;
  readonly sealed: SealedReads;
  readonly secrets: SecretReads;
  readonly imageChecks: ImageCheckReads;

  /** SQLite's one writer commits concurrent transactions together (see GroupCommit). */
  private readonly groups?: GroupCommit<Tables>;
  private watch?: ChangeWatch;

  private readonly kysely: Kysely<Tables>;
  readonly dialect: SqlDialect;
  private readonly options: StoreOptions;
  /** The root's lookups go through it once `startCache` has started it; until then they read the database. */
  private readonly cache: ReadCache;
  /** What this store's transaction scopes name, so that its root refuses to be used inside them. */
  private readonly identity: object;

  private constructor(
    kysely: Kysely<Tables>,
    dialect: SqlDialect,
    options: StoreOptions,

    cache: ReadCache,

    identity: object = {},
  ) {
    ({
      templates: this.templates,
      accounts: this.accounts,
      endpoints: this.endpoints,
      outbox: this.outbox,
      idempotency: this.idempotency,
      usage: this.usage,
      rateBuckets: this.rateBuckets,
      registryAuths: this.registryAuths,
      sealed: this.sealed,
      secrets: this.secrets,
      imageChecks: this.imageChecks,
    } = new RootRepositories(new Core(kysely, dialect, identity, undefined, cache)));
    this.kysely = kysely;
    this.dialect = dialect;
    this.options = options;
    this.cache = cache;
    this.identity = identity;
    if (dialect.name === 'sqlite') this.groups = new GroupCommit(kysely, identity, options.transactionTimeoutMs);
  }

  /** Several processes may share this database (PostgreSQL); SQLite is one process's own. */
  get shared(): boolean {
    return this.dialect.name === 'postgres';
  }

  /** A store over `dialect`; its lookups read the database until `startCache` (the server's, the tests'). */
  static open(
    dialect: SqlDialect,
    options: StoreOptions = DEFAULT_STORE_OPTIONS,
    cache: CacheOptions = { maxBytes: 0, maxKeys: 0 },
  ): Store {
    return new Store(new Kysely<Tables>({ dialect: dialect.kysely }), dialect, options, new ReadCache(cache));
  }

  /**
   * Starts hearing the database's changes (migration 0008; run `migrate` first), and with them using the read cache:
   * on SQLite at once, on PostgreSQL once the listening connection listens (it is retried in the background until it
   * does). `name` tells the listening connection apart (its application_name).
   */
  async startCache(name = `podplate-listener-${process.pid}`): Promise<void> {
    assertOutside(this.identity, 'The cache was started');
    if (this.watch) return;
    this.watch =
      this.dialect.name === 'sqlite'
        ? watchSqliteChanges(this.dialect, this.cache)
        : await listenForChanges(this.dialect, this.cache, name);
  }

  /**
   * SQLite: trims the change table (migration 0008) to its last `keep` rows; how many went. A process that had not
   * read the rows trimmed sees the gap and drops its whole cache (changes.ts). PostgreSQL keeps no such table.
   */
  async trimChanges(keep: number): Promise<number> {
    assertOutside(this.identity, 'The root store was used');
    if (this.dialect.name !== 'sqlite') return 0;
    const result = await sql`delete from cache_changes where seq <= (select max(seq) from cache_changes) - ${keep}`.execute(this.kysely);
    return Number(result.numAffectedRows ?? 0n);
  }

  /** PostgreSQL: the backend pid of this process's listening connection, while it listens. */
  get listenerPid(): number | undefined {
    return this.watch?.listenerPid;
  }

  /**
   * Runs `work` in one transaction: all of its writes land, or none, and the promise settles once they are
   * committed. On SQLite, transactions asked for together share one commit. Opening one from inside another
   * fails at once; so does a transaction that holds the database longer than the time limit.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    assertOutside(this.identity, 'A transaction was opened');
    const open = (connection: Kysely<Tables>, scope: Scope) =>
      work(new Transaction(new Core(connection, this.dialect, this.identity, scope)));
    // What the transaction changed is forgotten by this process's read cache once it has committed (or failed, when
    // forgetting is harmless), as the database's triggers name it: no write of a repository has to announce itself.
    if (this.groups) {
      try {
        return await this.groups.run(open);
      } finally {
        this.watch?.wroteHere();
      }
    }
    let written: string | undefined;
    try {
      return await this.kysely.transaction().execute(async (trx) => {
        // Open while the work runs: not while waiting for a connection, nor for the commit.
        const scope = new Scope(this.identity);
        const work = within(scope, () => open(trx, scope));
        const result = await withTimeLimit(work, this.options.transactionTimeoutMs, () => scope.close()).finally(() => scope.close());
        written = await changesWritten(trx);
        return result;
      });
    } finally {
      if (written) for (const name of written.trim().split(' ')) this.cache.forget(name);
    }
  }

  private migrator(schema: string | undefined): Migrator {
    return new Migrator({
      db: this.kysely,
      provider: { getMigrations: async () => migrations(this.dialect) },
      migrationTableSchema: schema,
    });
  }

  /** The migrations this database has not had yet (all of them for an empty one). */
  async pendingMigrations(): Promise<string[]> {
    return (await this.migrationState()).pending;
  }

  /** The latest migration this version of Podplate knows. */
  latestMigration(): string {
    return Object.keys(migrations(this.dialect)).at(-1) as string;
  }

  /**
   * Which migrations the database has had (with what each recorded: whether processes of the version before it may
   * serve beside it), which of this version's it has not, and which it has that this version does not know (a newer
   * version ran them). Changes nothing.
   */
  async migrationState(): Promise<MigrationState> {
    assertOutside(this.identity, 'Migrations were listed');
    const known = declared();
    const ran = (await this.hasTable(KYSELY_MIGRATIONS))
      ? (
          await sql<{ name: string; timestamp: string | Date }>`select name, timestamp from ${sql.table(KYSELY_MIGRATIONS)}`.execute(
            this.kysely,
          )
        ).rows
      : [];
    const records = (await this.hasTable(COMPATIBILITY_RECORD))
      ? new Map(
          (
            await sql<{ name: string; compatible: number }>`select name, compatible from ${sql.table(COMPATIBILITY_RECORD)}`.execute(
              this.kysely,
            )
          ).rows.map((r) => [r.name, Number(r.compatible) === 1]),
        )
      : new Map<string, boolean>();
    const applied = ran
      .map((row) => ({
        name: row.name,
        appliedAt: new Date(row.timestamp).toISOString(),
        known: known.has(row.name),
        compatible: records.get(row.name) ?? null,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    const done = new Set(applied.map((m) => m.name));
    return { applied, pending: [...known.keys()].filter((name) => !done.has(name)) };
  }

  private async hasTable(name: string): Promise<boolean> {
    const found =
      this.dialect.name === 'sqlite'
        ? await sql`select 1 from sqlite_master where type = 'table' and name = ${name}`.execute(this.kysely)
        : await sql`select 1 where to_regclass(${name}) is not null`.execute(this.kysely);
    return found.rows.length > 0;
  }

  /**
   * Brings the schema up to date. A database a newer version has migrated (migrations this version does not know) is
   * served as it is when every one of them is recorded as compatible with the version before, and refused
   * (`NewerSchema`) otherwise. Says what it found.
   */
  async migrate(): Promise<MigrationState> {
    assertOutside(this.identity, 'Migrations were run');
    const state = await this.migrationState();
    const newer = state.applied.filter((m) => !m.known);
    if (newer.length > 0) {
      const refused = newer.filter((m) => m.compatible !== true);
      if (refused.length > 0 || state.pending.length > 0) throw new NewerSchema(newer, refused, state.pending, this.latestMigration());
      // Nothing is written: not even the stored representations, which a newer version's rows may hold differently.
      return state;
    }
    if (state.pending.length > 0) await this.migrateToLatest();
    // A migration that changes the representation clears it: build what is missing, a batch per transaction.
    while (await this.transaction((tx) => tx.templates.buildMissingBodies(1000)));
    return state;
  }

  /**
   * Runs the pending migrations. On PostgreSQL, the migration bookkeeping lives in the schema the service uses (its
   * search_path), so that installs in other schemas of the same database never count as this one's. Kysely's migrator
   * looks for its tables across every schema of the database: one dropped meanwhile (another install's, a test's) fails
   * that look with "schema … does not exist" or "relation "….…" does not exist", naming that schema; it is looked at
   * again, a few times.
   */
  private async migrateToLatest(): Promise<void> {
    const schema = await this.schema();
    for (let attempt = 1; ; attempt++) {
      const { error } = await this.migrator(schema).migrateToLatest();
      if (!error) return;
      if (!otherSchemaVanished(error, schema) || attempt === 5) throw error;
    }
  }

  private async schema(): Promise<string | undefined> {
    if (this.dialect.name !== 'postgres') return undefined;
    return (await sql<{ schema: string }>`select current_schema() as schema`.execute(this.kysely)).rows[0]?.schema;
  }

  /**
   * Reads the whole install in one consistent snapshot, on a connection of its own, while the service goes on
   * (export). See dump.ts.
   */
  snapshot<T>(read: (reader: DumpReader) => Promise<T>): Promise<T> {
    assertOutside(this.identity, 'A snapshot was taken');
    return readSnapshot(this.dialect, read);
  }

  /** The tables that hold any row (none for an empty database, migrated or not). */
  heldTables(): Promise<string[]> {
    assertOutside(this.identity, 'The root store was used');
    return heldTables(this.kysely);
  }

  /** Writes an install into this empty database, all of it or nothing, on a connection of its own (import). See dump.ts. */
  restore<T>(write: (writer: DumpWriter) => Promise<T>): Promise<T> {
    assertOutside(this.identity, 'A restore was started');
    return writeRestore(this.dialect, write);
  }

  /** A consistent copy of the database in `file`, while it serves; SQLite only (PostgreSQL has pg_dump). */
  async backup(file: string): Promise<void> {
    if (!this.dialect.backup) throw new Error(`backup is for SQLite; use pg_dump for ${this.dialect.name}`);
    await this.dialect.backup(file);
  }

  figures(): DatabaseFigures {
    return { dialect: this.dialect.name, pool: this.dialect.figures(), groupCommits: this.groups?.sizes, cache: this.cache.figures() };
  }

  async ping(): Promise<void> {
    assertOutside(this.identity, 'The root store was used');
    await sql`select 1`.execute(this.kysely);
  }

  async close(): Promise<void> {
    await this.watch?.stop();
    await this.kysely.destroy();
  }
}

/** Whether `error` says a schema other than `schema`, or a table of one, vanished (3F000, 42P01): another's, dropped. */
export function otherSchemaVanished(error: unknown, schema: string | undefined): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  if (schema === undefined || (code !== '3F000' && code !== '42P01')) return false;
  const message = String((error as Error).message);
  return !message.includes(`"${schema}"`) && !message.includes(`"${schema}.`);
}
