import {
  type Compilable,
  type CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Insertable,
  Kysely,
  Migrator,
  type Selectable,
  type SqlBool,
  sql,
} from 'kysely';
import type { ReleaseStatus } from '../domain/release.ts';
import type { FieldChange } from '../domain/revision.ts';
import { type Template, type TemplateContent, templateJson } from '../domain/template.ts';
import type { Role, Visibility, VisibleFacts } from '../domain/visibility.ts';
import type { SqlDialect } from './dialect.ts';
import { GroupCommit } from './group-commit.ts';
import { migrations } from './migrations/index.ts';
import type { Database, EndpointsTable, ReleasesTable, TemplateRevisionsTable, TemplatesTable } from './schema.ts';

// The one store: every query written once over Kysely, run on SQLite or PostgreSQL through a SqlDialect.

export interface TemplateRecord extends Template {
  ownerId: string;
  endpointId: string | null;
}

/** A template as a read needs it: the facts that decide who sees it, its revision, and its representation. */
export interface TemplateView extends VisibleFacts {
  revision: number;
  /** The template as the API shows it, as JSON text. */
  json: string;
}

/** Every column of a template row, named (prepared statements must not select `*`). */
const TEMPLATE_COLUMNS = [
  'seq',
  'id',
  'owner_id',
  'endpoint_id',
  'name',
  'image_name',
  'category',
  'container_disk_in_gb',
  'volume_in_gb',
  'volume_mount_path',
  'container_registry_auth_id',
  'docker_entrypoint',
  'docker_start_cmd',
  'env',
  'ports',
  'readme',
  'is_public',
  'is_platform',
  'is_serverless',
  'earned',
  'runtime_in_min',
  'revision',
  'created_at',
  'updated_at',
  'search',
  'body',
] as const satisfies readonly (keyof TemplatesTable)[];
// A column added to TemplatesTable and not listed above fails to compile here.
const everyColumnListed: Exclude<keyof TemplatesTable, (typeof TEMPLATE_COLUMNS)[number]> extends never ? true : never = true;
void everyColumnListed;

const VIEW_COLUMNS = ['id', 'owner_id', 'endpoint_id', 'is_public', 'is_platform', 'revision', 'body'] as const;
type ViewRow = Pick<Selectable<TemplatesTable>, (typeof VIEW_COLUMNS)[number]>;

export interface TemplateQuery {
  visibility: Visibility;
  category?: string;
  isServerless?: boolean;
  /** Lowercased substring of name or image. */
  search?: string;
  limit: number;
  /** Only templates older than this position (a cursor from the page before). */
  before?: number;
}

export interface Principal {
  keyId: string;
  accountId: string;
  accountName: string;
  role: Role;
  digest: string;
  revokedAt: string | null;
}

export interface ApiKeyInfo {
  id: string;
  account: string;
  role: Role;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface EndpointRecord {
  id: string;
  ownerId: string;
  name: string;
  templateId: string;
  workersMin: number;
  workersMax: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface RevisionRecord {
  templateId: string;
  revision: number;
  snapshot: TemplateContent;
  diff: FieldChange[];
  keyId: string;
  createdAt: string;
}

export interface ReleaseRecord {
  id: string;
  endpointId: string;
  version: number;
  templateId: string;
  templateRevision: number;
  diff: FieldChange[];
  status: ReleaseStatus;
  workersUpdated: number;
  workersTotal: number;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryState {
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string;
  deliveredAt: string | null;
}

export interface OutboxEvent {
  seq: number;
  eventId: string;
  type: string;
  payload: string;
  attempts: number;
}

export interface StoredResponse {
  requestHash: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Page<T> {
  items: T[];
  /** Position after the last item of the page, when more may follow. */
  next?: number;
}

export class NameTaken extends Error {}
export class AlreadyBound extends Error {}
export class RoleMismatch extends Error {}

/** Queries compiled once per dialect (compiling costs more than a lookup by key), by name. */
const compiledQueries = new Map<string, CompiledQuery>();

export class Store {
  private constructor(
    private readonly db: Kysely<Database>,
    readonly dialect: SqlDialect,
    /** Inside a transaction: a nested `transaction` joins it. */
    private readonly joined: boolean,
    /** SQLite's one writer commits concurrent transactions together (see GroupCommit). */
    private readonly groups?: GroupCommit<Database>,
  ) {}

  static open(dialect: SqlDialect): Store {
    const db = new Kysely<Database>({ dialect: dialect.kysely });
    return new Store(db, dialect, false, dialect.name === 'sqlite' ? new GroupCommit(db) : undefined);
  }

  /** Runs the query `build` makes, compiled once, with `parameters` in the order the query takes them. */
  private async precompiled<R>(name: string, build: (db: Kysely<Database>) => Compilable<R>, parameters: unknown[]): Promise<R[]> {
    const key = `${this.dialect.name}:${name}`;
    let compiled = compiledQueries.get(key);
    if (!compiled) {
      compiled = build(this.db).compile();
      compiledQueries.set(key, compiled);
    }
    this.dialect.prepare?.(compiled.sql);
    // Outside a transaction, SQLite answers a read at once (see `SqlDialect.readNow`).
    const rows = this.joined ? undefined : this.dialect.readNow?.(compiled.sql, parameters);
    if (rows) return rows as R[];
    const result = await this.db.executeQuery<R>({ ...compiled, parameters } as CompiledQuery<R>);
    return result.rows;
  }

  /** Inserts `row` into `table` with a statement compiled once per name: every row given under a name has the same columns. */
  private async insertRow<T extends keyof Database>(name: string, table: T, row: Insertable<Database[T]>): Promise<void> {
    const values = Object.values(row);
    await this.precompiled(
      name,
      (db) => {
        const query = db.insertInto(table).values(row);
        if (query.compile().parameters.length !== values.length) throw new Error(`${name}: every column must be a parameter`);
        return query;
      },
      values,
    );
  }

  /**
   * Runs `work` in one transaction: all of its writes land, or none, and the promise settles once they are
   * committed. Inside a transaction, joins it. On SQLite, transactions asked for together share one commit.
   */
  transaction<T>(work: (store: Store) => Promise<T>): Promise<T> {
    if (this.joined) return work(this);
    if (this.groups) return this.groups.run((connection) => work(new Store(connection, this.dialect, true)));
    return this.db.transaction().execute((trx) => work(new Store(trx, this.dialect, true)));
  }

  async migrate(): Promise<void> {
    // On PostgreSQL, the migration bookkeeping lives in the schema the service uses (its search_path), so that
    // installs in other schemas of the same database never count as this one's.
    const schema =
      this.dialect.name === 'postgres'
        ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(this.db)).rows[0]?.schema
        : undefined;
    const migrator = new Migrator({
      db: this.db,
      provider: { getMigrations: async () => migrations(this.dialect) },
      migrationTableSchema: schema,
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
    await this.buildMissingBodies();
  }

  /**
   * Writes the API representation of every template that has none yet, a batch at a time. Each batch is read
   * under its rows' locks, so a write by another process can't be overwritten with what it replaced.
   */
  private async buildMissingBodies(): Promise<void> {
    for (;;) {
      const built = await this.transaction(async (tx) => {
        const missing = tx.db.selectFrom('templates').select(TEMPLATE_COLUMNS).where('body', 'is', null).orderBy('seq').limit(1000);
        const rows = await (this.dialect.name === 'postgres' ? missing.forUpdate().skipLocked() : missing).execute();
        for (const row of rows) {
          await tx.db
            .updateTable('templates')
            .set({ body: templateJson(toTemplate(row)) })
            .where('seq', '=', row.seq)
            .execute();
        }
        return rows.length;
      });
      if (built === 0) return;
    }
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  // --- accounts and keys

  async ensureAccount(account: { id: string; name: string; role: Role; createdAt: string }): Promise<{ id: string; role: Role }> {
    await this.db
      .insertInto('accounts')
      .values({ id: account.id, name: account.name, role: account.role, created_at: account.createdAt })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await this.db.selectFrom('accounts').select(['id', 'role']).where('name', '=', account.name).executeTakeFirstOrThrow();
    if (row.role !== account.role) throw new RoleMismatch(`account ${account.name} has role ${row.role}`);
    return row;
  }

  async insertApiKey(key: { id: string; accountId: string; digest: string; prefix: string; createdAt: string }): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({ id: key.id, account_id: key.accountId, digest: key.digest, prefix: key.prefix, created_at: key.createdAt })
      .execute();
  }

  async findPrincipal(digest: string): Promise<Principal | undefined> {
    const [row] = await this.precompiled<Principal>(
      'findPrincipal',
      (db) =>
        db
          .selectFrom('api_keys')
          .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
          .select([
            'api_keys.id as keyId',
            'accounts.id as accountId',
            'accounts.name as accountName',
            'accounts.role as role',
            'api_keys.digest as digest',
            'api_keys.revoked_at as revokedAt',
          ])
          .where('api_keys.digest', '=', digest),
      [digest],
    );
    return row;
  }

  async listApiKeys(): Promise<ApiKeyInfo[]> {
    return this.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select([
        'api_keys.id as id',
        'accounts.name as account',
        'accounts.role as role',
        'api_keys.prefix as prefix',
        'api_keys.created_at as createdAt',
        'api_keys.revoked_at as revokedAt',
      ])
      .orderBy('api_keys.created_at')
      .orderBy('api_keys.id')
      .execute();
  }

  async revokeApiKey(id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async countApiKeys(): Promise<number> {
    const row = await this.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // --- templates

  async insertTemplate(template: TemplateRecord): Promise<void> {
    try {
      await this.insertRow('insertTemplate', 'templates', toRow(template));
    } catch (error) {
      throw this.dialect.isUniqueViolation(error) ? new NameTaken() : error;
    }
  }

  /** The template; with `lock`, its row stays locked against other writers until the transaction ends. */
  async findTemplate(id: string, options: { lock?: boolean } = {}): Promise<TemplateRecord | undefined> {
    // SQLite has no row locks and needs none: one writer at a time holds the whole database.
    const lock = options.lock === true && this.dialect.name === 'postgres';
    const [row] = await this.precompiled<Selectable<TemplatesTable>>(
      lock ? 'findTemplateForUpdate' : 'findTemplate',
      (db) => {
        const select = db.selectFrom('templates').select(TEMPLATE_COLUMNS).where('id', '=', id);
        return lock ? select.forUpdate() : select;
      },
      [id],
    );
    return row && toTemplate(row);
  }

  /**
   * What a read of one template needs: who may see it, its revision, and its API representation as JSON text,
   * without turning the whole row into an object.
   */
  async findTemplateView(id: string): Promise<TemplateView | undefined> {
    const [row] = await this.precompiled<ViewRow>(
      'findTemplateView',
      (db) => db.selectFrom('templates').select(VIEW_COLUMNS).where('id', '=', id),
      [id],
    );
    const json = row && (row.body ?? (await this.bodyOf(row.id)));
    if (!row || json === undefined) return undefined;
    return {
      ownerId: row.owner_id,
      isPublic: row.is_public === 1,
      isPlatform: row.is_platform === 1,
      bound: row.endpoint_id !== null,
      revision: row.revision,
      json,
    };
  }

  /** The representation of a template whose body is not built yet (a row written around the store); none once deleted. */
  private async bodyOf(id: string): Promise<string | undefined> {
    const template = await this.findTemplate(id);
    return template && templateJson(template);
  }

  /** Writes `template` over the stored one if that is still at `expectedRevision`; false when it moved on or is gone. */
  async replaceTemplate(template: TemplateRecord, expectedRevision: number): Promise<boolean> {
    const { seq: _seq, id, owner_id, created_at, ...changes } = toRow(template);
    try {
      const result = await this.db
        .updateTable('templates')
        .set(changes)
        .where('id', '=', id)
        .where('revision', '=', expectedRevision)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    } catch (error) {
      throw this.dialect.isUniqueViolation(error) ? new NameTaken() : error;
    }
  }

  /** Deletes an unbound template still at `revision`; false when it is gone, bound, or has moved on. */
  async deleteTemplate(id: string, revision: number): Promise<boolean> {
    const result = await this.db
      .deleteFrom('templates')
      .where('id', '=', id)
      .where('revision', '=', revision)
      .where('endpoint_id', 'is', null)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /**
   * A page of the templates visible to the caller, newest first. Each visibility scope (own, official, public) is
   * read apart, down its own index in `seq` order, and the pages merged: an OR of the scopes in one query would
   * make the database sort every visible template to find the first hundred.
   */
  async listTemplates(query: TemplateQuery): Promise<Page<string>> {
    const rows = await this.listQuery(query).execute();
    const shown = page(
      rows,
      query.limit,
      (row) => row.seq,
      (row) => row,
    );
    const items = await Promise.all(shown.items.map((row) => row.body ?? this.bodyOf(row.id)));
    return { ...shown, items: items.filter((json) => json !== undefined) };
  }

  /** The SQL a list page runs (tests read its plan). */
  listTemplatesSql(query: TemplateQuery): CompiledQuery {
    return this.listQuery(query).compile();
  }

  /** One page and one row more: each visibility scope read down its own index in `seq` order, and the pages merged. */
  private listQuery(query: TemplateQuery) {
    const take = query.limit + 1;
    const branches = visibleScopes(query.visibility).map((scope) => {
      let select = this.db
        .selectFrom('templates')
        .select(['seq', 'id', 'body'])
        .where((eb) => eb.and(scope.where(eb)));
      if (query.category !== undefined) select = select.where('category', '=', query.category);
      if (query.isServerless !== undefined) select = select.where('is_serverless', '=', query.isServerless ? 1 : 0);
      if (query.search) select = select.where(sql<SqlBool>`search like ${`%${escapeLike(query.search)}%`} escape '\\'`);
      if (query.before !== undefined) select = select.where('seq', '<', query.before);
      return select.orderBy(scope.index, 'desc').orderBy('seq', 'desc').limit(take);
    });
    // The caller's own scope is always there.
    const [first, ...rest] = branches.map((branch, i) => this.db.selectFrom(branch.as(`scope${i}`)).selectAll());
    const merged = rest.reduce((all, branch) => all.unionAll(branch), first as NonNullable<typeof first>);
    return this.db.selectFrom(merged.as('visible')).selectAll().orderBy('seq', 'desc').limit(take);
  }

  // --- endpoints

  /** Binds the template and creates the endpoint, at once. */
  async createEndpoint(endpoint: EndpointRecord): Promise<void> {
    await this.transaction(async (store) => {
      const bound = await store.db
        .updateTable('templates')
        .set({ endpoint_id: endpoint.id })
        .where('id', '=', endpoint.templateId)
        .where('endpoint_id', 'is', null)
        .executeTakeFirst();
      if (bound.numUpdatedRows === 0n) throw new AlreadyBound();
      try {
        await store.db.insertInto('endpoints').values(toEndpointRow(endpoint)).execute();
      } catch (error) {
        throw store.dialect.isUniqueViolation(error) ? new NameTaken() : error;
      }
    });
  }

  async findEndpoint(id: string): Promise<EndpointRecord | undefined> {
    const row = await this.db.selectFrom('endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toEndpoint(row);
  }

  async listEndpoints(ownerId: string, limit: number, before?: number): Promise<Page<EndpointRecord>> {
    let select = this.db.selectFrom('endpoints').selectAll().where('owner_id', '=', ownerId);
    if (before !== undefined) select = select.where('seq', '<', before);
    const rows = await select
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    return page(rows, limit, (row) => row.seq, toEndpoint);
  }

  /** Deletes the endpoint and unbinds its template, at once; false when it is gone. */
  async deleteEndpoint(id: string): Promise<boolean> {
    return this.transaction(async (store) => {
      // The template row first, then the endpoint's: the order every writer of both takes, so none deadlock.
      const unbound = await store.db.updateTable('templates').set({ endpoint_id: null }).where('endpoint_id', '=', id).executeTakeFirst();
      const deleted = await store.db.deleteFrom('endpoints').where('id', '=', id).executeTakeFirst();
      return unbound.numUpdatedRows > 0n || deleted.numDeletedRows > 0n;
    });
  }

  // --- revisions

  async insertRevision(r: RevisionRecord): Promise<void> {
    await this.insertRow('insertRevision', 'template_revisions', {
      template_id: r.templateId,
      revision: r.revision,
      snapshot: JSON.stringify(r.snapshot),
      diff: JSON.stringify(r.diff),
      key_id: r.keyId,
      created_at: r.createdAt,
    });
  }

  async findRevision(templateId: string, revision: number): Promise<RevisionRecord | undefined> {
    const row = await this.db
      .selectFrom('template_revisions')
      .selectAll()
      .where('template_id', '=', templateId)
      .where('revision', '=', revision)
      .executeTakeFirst();
    return row && toRevision(row);
  }

  /** Newest first; `before` is a revision number. */
  async listRevisions(templateId: string, limit: number, before?: number): Promise<Page<RevisionRecord>> {
    let select = this.db.selectFrom('template_revisions').selectAll().where('template_id', '=', templateId);
    // Revision numbers are 32-bit integers; a larger cursor position starts from the newest.
    if (before !== undefined) select = select.where('revision', '<', Math.min(before, 2 ** 31 - 1));
    const rows = await select
      .orderBy('revision', 'desc')
      .limit(limit + 1)
      .execute();
    return page(rows, limit, (row) => row.revision, toRevision);
  }

  // --- releases

  /** Records a new release of the endpoint: supersedes its unfinished ones and moves its version on. */
  async insertRelease(release: ReleaseRecord): Promise<void> {
    await this.db
      .updateTable('releases')
      .set({ status: 'superseded', updated_at: release.createdAt })
      .where('endpoint_id', '=', release.endpointId)
      .where('status', 'in', ['pending', 'rolling'])
      .execute();
    await this.db
      .updateTable('endpoints')
      .set({ version: release.version, updated_at: release.createdAt })
      .where('id', '=', release.endpointId)
      .execute();
    await this.db
      .insertInto('releases')
      .values({
        id: release.id,
        endpoint_id: release.endpointId,
        version: release.version,
        template_id: release.templateId,
        template_revision: release.templateRevision,
        diff: JSON.stringify(release.diff),
        status: release.status,
        workers_updated: release.workersUpdated,
        workers_total: release.workersTotal,
        created_at: release.createdAt,
        updated_at: release.updatedAt,
      })
      .execute();
  }

  async findRelease(id: string, options: { lock?: boolean } = {}): Promise<ReleaseRecord | undefined> {
    let select = this.db.selectFrom('releases').selectAll().where('id', '=', id);
    if (options.lock && this.dialect.name === 'postgres') select = select.forUpdate();
    const row = await select.executeTakeFirst();
    return row && toRelease(row);
  }

  async listReleases(endpointId: string, limit: number, before?: number): Promise<Page<ReleaseRecord>> {
    let select = this.db.selectFrom('releases').selectAll().where('endpoint_id', '=', endpointId);
    if (before !== undefined) select = select.where('seq', '<', before);
    const rows = await select
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    return page(rows, limit, (row) => row.seq, toRelease);
  }

  async updateReleaseProgress(r: Pick<ReleaseRecord, 'id' | 'status' | 'workersUpdated' | 'workersTotal' | 'updatedAt'>): Promise<void> {
    await this.db
      .updateTable('releases')
      .set({ status: r.status, workers_updated: r.workersUpdated, workers_total: r.workersTotal, updated_at: r.updatedAt })
      .where('id', '=', r.id)
      .execute();
  }

  // --- the outbox

  async enqueue(event: {
    eventId: string;
    type: string;
    subjectId: string;
    orderingKey: string;
    payload: string;
    createdAt: string;
  }): Promise<void> {
    await this.db
      .insertInto('outbox')
      .values({
        event_id: event.eventId,
        type: event.type,
        subject_id: event.subjectId,
        ordering_key: event.orderingKey,
        payload: event.payload,
        created_at: event.createdAt,
        next_attempt_at: event.createdAt,
      })
      .execute();
  }

  /**
   * Takes up to `limit` events that are due, not held by another deliverer, and first in line for their ordering
   * key (no older event with that key is still undelivered), and holds them until `leaseUntil` under `leaseToken`.
   * On PostgreSQL, rows that another process is claiming at this moment are skipped.
   */
  async claimDue(now: string, leaseUntil: string, leaseToken: string, limit: number): Promise<OutboxEvent[]> {
    return this.transaction(async (tx) => {
      let due = tx.db
        .selectFrom('outbox as o')
        .select('o.seq')
        .where('o.delivered_at', 'is', null)
        .where('o.next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('o.leased_until', 'is', null), eb('o.leased_until', '<', now)]))
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('outbox as earlier')
                .select('earlier.seq')
                .whereRef('earlier.ordering_key', '=', 'o.ordering_key')
                .whereRef('earlier.seq', '<', 'o.seq')
                .where('earlier.delivered_at', 'is', null),
            ),
          ),
        )
        .orderBy('o.seq')
        .limit(limit);
      if (tx.dialect.name === 'postgres') due = due.forUpdate().skipLocked();
      const seqs = (await due.execute()).map((r) => r.seq);
      if (seqs.length === 0) return [];
      const rows = await tx.db
        .updateTable('outbox')
        .set((eb) => ({ leased_until: leaseUntil, lease_token: leaseToken, attempts: eb('attempts', '+', 1) }))
        .where('seq', 'in', seqs)
        .returning(['seq', 'event_id', 'type', 'payload', 'attempts'])
        .execute();
      return rows
        .map((r) => ({ seq: Number(r.seq), eventId: r.event_id, type: r.type, payload: r.payload, attempts: r.attempts }))
        .sort((a, b) => a.seq - b.seq);
    });
  }

  /** Records a delivery, if `leaseToken` still holds the event's lease; false otherwise. */
  async markDelivered(seq: number, leaseToken: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable('outbox')
      .set({ delivered_at: at, leased_until: null, lease_token: null, last_error: null })
      .where('seq', '=', seq)
      .where('lease_token', '=', leaseToken)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Records a failed attempt and when to try again, if `leaseToken` still holds the event's lease. */
  async markFailed(seq: number, leaseToken: string, error: string, nextAttemptAt: string): Promise<boolean> {
    const result = await this.db
      .updateTable('outbox')
      .set({ last_error: error, next_attempt_at: nextAttemptAt, leased_until: null, lease_token: null })
      .where('seq', '=', seq)
      .where('lease_token', '=', leaseToken)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** The delivery state of the events about each subject (a release), by subject id. */
  async deliveries(subjectIds: string[]): Promise<Map<string, DeliveryState>> {
    if (subjectIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('outbox')
      .select(['subject_id', 'attempts', 'last_error', 'next_attempt_at', 'delivered_at'])
      .where('subject_id', 'in', subjectIds)
      .execute();
    return new Map(
      rows.map((r) => [
        r.subject_id,
        { attempts: r.attempts, lastError: r.last_error, nextAttemptAt: r.next_attempt_at, deliveredAt: r.delivered_at },
      ]),
    );
  }

  /** Events not yet delivered: how many, how many have failed at least once, and when the oldest was written. */
  async outboxBacklog(): Promise<{ pending: number; failing: number; oldest: string | null }> {
    const row = await this.db
      .selectFrom('outbox')
      .select((eb) => [
        eb.fn.countAll<number>().as('pending'),
        eb.fn.count<number>('last_error').as('failing'),
        eb.fn.min('created_at').as('oldest'),
      ])
      .where('delivered_at', 'is', null)
      .executeTakeFirstOrThrow();
    return { pending: Number(row.pending), failing: Number(row.failing), oldest: (row.oldest as string | null) ?? null };
  }

  // --- idempotency keys

  async findStoredResponse(accountId: string, key: string): Promise<StoredResponse | undefined> {
    const row = await this.db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'status', 'headers', 'body'])
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
    return row && { requestHash: row.request_hash, status: row.status, headers: JSON.parse(row.headers), body: row.body };
  }

  async storeResponse(accountId: string, key: string, response: StoredResponse, at: string): Promise<void> {
    await this.db
      .insertInto('idempotency_keys')
      .values({
        account_id: accountId,
        key,
        request_hash: response.requestHash,
        status: response.status,
        headers: JSON.stringify(response.headers),
        body: response.body,
        created_at: at,
      })
      .execute();
  }

  async forgetResponsesBefore(at: string): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('created_at', '<', at).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  // --- usage

  /** Counts a usage report once per usageId: false (and nothing changes) when it was counted before. */
  async addUsage(usage: {
    usageId: string;
    templateId: string;
    runtimeInMin: number;
    earned: number;
    createdAt: string;
  }): Promise<boolean> {
    const inserted = await this.db
      .insertInto('usage_reports')
      .values({
        usage_id: usage.usageId,
        template_id: usage.templateId,
        runtime_in_min: usage.runtimeInMin,
        earned: usage.earned,
        created_at: usage.createdAt,
      })
      .onConflict((oc) => oc.column('usage_id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
    await this.db
      .updateTable('templates')
      .set((eb) => ({ runtime_in_min: eb('runtime_in_min', '+', usage.runtimeInMin), earned: eb('earned', '+', usage.earned) }))
      .where('id', '=', usage.templateId)
      .execute();
    // The sums are part of the template's representation: rebuild it (the caller holds the row's lock).
    const template = await this.findTemplate(usage.templateId);
    if (template)
      await this.db
        .updateTable('templates')
        .set({ body: templateJson(template) })
        .where('id', '=', template.id)
        .execute();
    return true;
  }

  async findUsage(usageId: string): Promise<{ templateId: string; runtimeInMin: number; earned: number } | undefined> {
    const row = await this.db.selectFrom('usage_reports').selectAll().where('usage_id', '=', usageId).executeTakeFirst();
    return row && { templateId: row.template_id, runtimeInMin: Number(row.runtime_in_min), earned: row.earned };
  }
}

type Condition = (eb: ExpressionBuilder<Database, 'templates'>) => Expression<SqlBool>[];

/** Rows of one visibility scope, and the leading column of the index (that column, then `seq`) they are read down. */
interface Scope {
  where: Condition;
  index: 'owner_id' | 'is_platform' | 'is_public';
}

/**
 * The visibility rule of domain/visibility.ts `isVisible`, as SQL: disjoint scopes, each read down its own index.
 * Each index's leading column is bounded by a range (`>= x and <= x`), not `= x`, and is ordered on: with an
 * equality, PostgreSQL drops the column from the order and may walk the whole table backwards by `seq` instead,
 * filtering. It does when an account holds a few percent of all templates, but none of the newest: a page then
 * read every newer template before reaching the account's own (at 100,000 templates: 22 ms a page, not 0.2 ms).
 */
function visibleScopes(v: Visibility): Scope[] {
  const unbound: Condition = (eb) => (v.bound ? [] : [eb('endpoint_id', 'is', null)]);
  const scopes: Scope[] = [
    { index: 'owner_id', where: (eb) => [eb('owner_id', '>=', v.ownerId), eb('owner_id', '<=', v.ownerId), ...unbound(eb)] },
  ];
  if (v.platform)
    scopes.push({ index: 'is_platform', where: (eb) => [eb('is_platform', '>=', 1), eb('owner_id', '<>', v.ownerId), ...unbound(eb)] });
  if (v.public)
    scopes.push({
      index: 'is_public',
      // `<> 1`, not `= 0`, so that no index serves it: without statistics SQLite takes `is_platform = 0` for a rare
      // value and reads down the platform index, sorting every community template (0 pages/s at 1,000,000).
      where: (eb) => [eb('is_public', '>=', 1), eb('is_platform', '<>', 1), eb('owner_id', '<>', v.ownerId), ...unbound(eb)],
    });
  return scopes;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function toRow(t: TemplateRecord): Omit<Selectable<TemplatesTable>, 'seq'> & { seq?: number } {
  return {
    id: t.id,
    owner_id: t.ownerId,
    endpoint_id: t.endpointId,
    name: t.name,
    image_name: t.imageName,
    category: t.category,
    container_disk_in_gb: t.containerDiskInGb,
    volume_in_gb: t.volumeInGb,
    volume_mount_path: t.volumeMountPath,
    container_registry_auth_id: t.containerRegistryAuthId,
    docker_entrypoint: JSON.stringify(t.dockerEntrypoint),
    docker_start_cmd: JSON.stringify(t.dockerStartCmd),
    env: JSON.stringify(t.env),
    ports: JSON.stringify(t.ports),
    readme: t.readme,
    is_public: t.isPublic ? 1 : 0,
    is_platform: t.isPlatform ? 1 : 0,
    is_serverless: t.isServerless ? 1 : 0,
    earned: t.earned,
    runtime_in_min: t.runtimeInMin,
    revision: t.revision,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    search: `${t.name}\n${t.imageName}`.toLowerCase(),
    body: templateJson(t),
  };
}

function toTemplate(row: Selectable<TemplatesTable>): TemplateRecord {
  return {
    id: row.id,
    name: row.name,
    imageName: row.image_name,
    category: row.category as TemplateRecord['category'],
    containerDiskInGb: row.container_disk_in_gb,
    volumeInGb: row.volume_in_gb,
    volumeMountPath: row.volume_mount_path,
    containerRegistryAuthId: row.container_registry_auth_id,
    dockerEntrypoint: JSON.parse(row.docker_entrypoint),
    dockerStartCmd: JSON.parse(row.docker_start_cmd),
    env: JSON.parse(row.env),
    ports: JSON.parse(row.ports),
    readme: row.readme,
    isPublic: row.is_public === 1,
    isPlatform: row.is_platform === 1,
    isServerless: row.is_serverless === 1,
    earned: row.earned,
    runtimeInMin: Number(row.runtime_in_min),
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ownerId: row.owner_id,
    endpointId: row.endpoint_id,
  };
}

/** A page from `limit + 1` rows: the extra row only tells that more follow. */
function page<Row, T>(rows: Row[], limit: number, position: (row: Row) => number, map: (row: Row) => T): Page<T> {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return { items: shown.map(map), next: rows.length > limit && last ? position(last) : undefined };
}

function toRevision(row: Selectable<TemplateRevisionsTable>): RevisionRecord {
  return {
    templateId: row.template_id,
    revision: row.revision,
    snapshot: JSON.parse(row.snapshot),
    diff: JSON.parse(row.diff),
    keyId: row.key_id,
    createdAt: row.created_at,
  };
}

function toRelease(row: Selectable<ReleasesTable>): ReleaseRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    version: row.version,
    templateId: row.template_id,
    templateRevision: row.template_revision,
    diff: JSON.parse(row.diff),
    status: row.status as ReleaseStatus,
    workersUpdated: row.workers_updated,
    workersTotal: row.workers_total,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toEndpointRow(e: EndpointRecord): Omit<Selectable<EndpointsTable>, 'seq'> {
  return {
    id: e.id,
    owner_id: e.ownerId,
    name: e.name,
    template_id: e.templateId,
    workers_min: e.workersMin,
    workers_max: e.workersMax,
    version: e.version,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

function toEndpoint(row: Selectable<EndpointsTable>): EndpointRecord {
  return {
    id: row.id,
    ownerId: row.owner_id,
    name: row.name,
    templateId: row.template_id,
    workersMin: row.workers_min,
    workersMax: row.workers_max,
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
