import { type CompiledQuery, sql } from 'kysely';
import { type ListPosition, PAGE_MAX_BYTES, type Page } from '../../domain/page.ts';
import { forgettingFrom, type RevisionRecord } from '../../domain/revision.ts';
import { type TemplateRecord, type TemplateView, templateJson, templateNameTaken } from '../../domain/template.ts';
import { type Core, RowInsert, SIZED, Statement, sizedPage, withinBudget } from '../core.ts';
import { searchText, TEMPLATE_COLUMNS, toRevision, toRow, toTemplate } from './columns.ts';
import {
  listQuery,
  rareTrigramOf,
  type SearchPlan,
  scopeCount,
  type TemplateQuery,
  walkCount,
  walkEndQuery,
  walkEndsQuery,
} from './list.ts';
import { SearchSample } from './search-sample.ts';
import { Turns } from './turns.ts';

// The templates and their revisions: one aggregate, one repository, and the plan of each search.

/** The rows of each scope a search reads down the scope's index, at most, for one page. */
export const WALK_ROWS = 10_000;
/** PostgreSQL: the default of `TemplateRepository.searchAttemptMs`, in milliseconds. */
export const SEARCH_ATTEMPT_MS = 40;
/** PostgreSQL: the default of `TemplateRepository.searchWorkMax`, as rows checked (about 20 ms' worth). */
export const SEARCH_WORK_MAX = 4_000;

/** A template of a list page: its owner (who decides what it shows), the owner's account name, and its JSON text. */
export interface ListedTemplate {
  ownerId: string;
  registryAuthId: string;
  ownerName: string;
  json: string;
}

const VIEW_COLUMNS = [
  'id',
  'owner_id',
  'endpoint_id',
  'is_public',
  'is_platform',
  'revision',
  'container_registry_auth_id',
  'image_check_status',
  'image_checked_at',
  'body',
] as const;

const FIND_TEMPLATE = new Statement((db, id: string) => db.selectFrom('templates').select(TEMPLATE_COLUMNS).where('id', '=', id));
const FIND_TEMPLATE_FOR_UPDATE = new Statement((db, id: string) =>
  db.selectFrom('templates').select(TEMPLATE_COLUMNS).where('id', '=', id).forUpdate(),
);
const FIND_VIEW = new Statement((db, id: string) => db.selectFrom('templates').select(VIEW_COLUMNS).where('id', '=', id));
const INSERT_TEMPLATE = new RowInsert('templates');
const INSERT_REVISION = new RowInsert('template_revisions');

/** What the root store may do with templates: read. Writes are a transaction's (store.ts). */
export type TemplateReads = Pick<
  TemplateRepository,
  | 'searchAttemptMs'
  | 'searchWorkMax'
  | 'pruneRevisionsSql'
  | 'find'
  | 'findView'
  | 'list'
  | 'searchPlan'
  | 'referringTo'
  | 'referringToSql'
  | 'walkEndsSql'
  | 'listSql'
  | 'oldestRevision'
  | 'findRevision'
  | 'listRevisions'
>;

export class TemplateRepository {
  /** PostgreSQL: how long a search through `like` may take before the term is walked instead (see `likeWithin`). */
  searchAttemptMs = SEARCH_ATTEMPT_MS;
  /** PostgreSQL: a term its trigram index would do more work for, estimated, is walked (see search-sample.ts). */
  searchWorkMax = SEARCH_WORK_MAX;

  private readonly core: Core;
  private readonly sample: SearchSample | undefined;
  private readonly turns = new Turns();

  constructor(core: Core) {
    this.core = core;
    // One sample for the install, kept by the root store's repository (a transaction's lists, if any, try `like`).
    if (core.dialect.name === 'postgres' && !core.inTransaction) this.sample = new SearchSample(core.db);
  }

  /** Inserts a new template; with `checkDue`, its image check is due then (see image-checks.ts). */
  async insert(template: TemplateRecord, checkDue: string | null = null): Promise<void> {
    const queue = {
      image_check_due_at: checkDue,
      image_check_attempts: 0,
      image_check_leased_until: null,
      image_check_lease: null,
      image_check_revision: template.revision,
    };
    await this.core.unique(this.core.insertRow(INSERT_TEMPLATE, { ...toRow(template), ...queue }), templateNameTaken);
  }

  /** The template; with `lock`, its row stays locked against other writers until the transaction ends. */
  async find(id: string, options: { lock?: boolean } = {}): Promise<TemplateRecord | undefined> {
    const lock = options.lock === true && this.core.locksRows;
    const [row] = await this.core.run(lock ? FIND_TEMPLATE_FOR_UPDATE : FIND_TEMPLATE, id);
    return row && toTemplate(row);
  }

  /**
   * What a read of one template needs: who may see it, its revision, and its API representation as JSON text,
   * without turning the whole row into an object.
   */
  findView(id: string): Promise<TemplateView | undefined> {
    const cache = this.core.cache;
    return cache ? cache.view(id, () => this.readView(id)) : this.readView(id);
  }

  private async readView(id: string): Promise<TemplateView | undefined> {
    const [row] = await this.core.run(FIND_VIEW, id);
    const json = row && (row.body ?? (await this.bodyOf(row.id)));
    if (!row || json === undefined) return undefined;
    return {
      ownerId: row.owner_id,
      isPublic: row.is_public === 1,
      isPlatform: row.is_platform === 1,
      bound: row.endpoint_id !== null,
      revision: row.revision,
      imageCheck: { status: row.image_check_status, checkedAt: row.image_checked_at },
      registryAuthId: row.container_registry_auth_id,
      json,
    };
  }

  /**
   * The representation of a template whose body is missing: a row written around the store, or changed by SQL
   * (a trigger then clears its body, see migration 0004). None once the template is deleted.
   */
  private async bodyOf(id: string): Promise<string | undefined> {
    const template = await this.find(id);
    return template && templateJson(template);
  }

  /** Writes `template` over the stored one if that is still at `expectedRevision`; false when it moved on or is gone. */
  async replace(template: TemplateRecord, expectedRevision: number): Promise<boolean> {
    const { seq: _seq, id, owner_id, created_at, ...changes } = toRow(template);
    const result = await this.core.unique(
      this.core.db.updateTable('templates').set(changes).where('id', '=', id).where('revision', '=', expectedRevision).executeTakeFirst(),
      templateNameTaken,
    );
    return result.numUpdatedRows > 0n;
  }

  /**
   * Deletes an unbound template still at `revision`, with what describes it: its revisions, and the releases that
   * rolled it out on endpoints (with their events, delivered or not); the releases that moved an endpoint from it to
   * another template keep which fields changed, and to what, but not its values. False when it is gone, bound, or
   * has moved on.
   */
  async delete(id: string, revision: number): Promise<boolean> {
    this.core.requireTransaction('Deleting a template');
    const result = await this.core.db
      .deleteFrom('templates')
      .where('id', '=', id)
      .where('revision', '=', revision)
      .where('endpoint_id', 'is', null)
      .executeTakeFirst();
    if (result.numDeletedRows === 0n) return false;
    const releases = this.core.db.selectFrom('releases').select('id').where('template_id', '=', id);
    await this.core.db.deleteFrom('outbox').where('subject_id', 'in', releases).execute();
    await this.core.db.deleteFrom('releases').where('template_id', '=', id).execute();
    const rebinds = await this.core.db.selectFrom('releases').select(['id', 'diff']).where('previous_template_id', '=', id).execute();
    for (const release of rebinds) {
      const diff = forgettingFrom(JSON.parse(release.diff));
      await this.core.db
        .updateTable('releases')
        .set({ diff: JSON.stringify(diff), previous_template_id: null })
        .where('id', '=', release.id)
        .execute();
      const pending = await this.core.db
        .selectFrom('outbox')
        .select(['seq', 'payload'])
        .where('subject_id', '=', release.id)
        .where('payload', '<>', '')
        .execute();
      for (const event of pending) {
        const payload = JSON.parse(event.payload);
        payload.data.release.diff = diff;
        await this.core.db
          .updateTable('outbox')
          .set({ payload: JSON.stringify(payload) })
          .where('seq', '=', event.seq)
          .execute();
      }
    }
    return true;
  }

  /** Adds usage to a template's totals and rebuilds its representation, which shows them (the caller holds the row's lock). */
  async addUsage(id: string, runtimeInMin: number, earned: number): Promise<void> {
    this.core.requireTransaction('Adding usage');
    await this.core.db
      .updateTable('templates')
      .set((eb) => ({ runtime_in_min: eb('runtime_in_min', '+', runtimeInMin), earned: eb('earned', '+', earned) }))
      .where('id', '=', id)
      .execute();
    const template = await this.find(id);
    if (template)
      await this.core.db
        .updateTable('templates')
        .set({ body: templateJson(template) })
        .where('id', '=', id)
        .execute();
  }

  /**
   * A page of the templates visible to the caller, newest first, as their JSON representations. Each visibility
   * scope is read down its own index and the pages merged (see template-list.ts). SQLite reads on the event loop:
   * pages take turns, the accounts in turn (turns.ts).
   */
  async list(query: TemplateQuery): Promise<Page<ListedTemplate, ListPosition>> {
    // Refused from inside a transaction here, on the caller's stack: the page runs on the queue's own.
    void this.core.db;
    if (this.core.dialect.name === 'postgres') return await this.page(query);
    return this.turns.take(query.visibility.ownerId, () => this.page(query));
  }

  private async page(query: TemplateQuery): Promise<Page<ListedTemplate, ListPosition>> {
    let plan = await this.searchPlan(query);
    let rows = plan.via === 'like' && query.search ? await this.likeWithin(query, plan) : undefined;
    if (rows === undefined) {
      if (plan.via === 'like' && query.search) plan = await this.walkPlan(query);
      rows = await listQuery(this.core.db, this.core.dialect.name, query, PAGE_MAX_BYTES, plan).execute();
    }
    const popular = query.sort === 'popular';
    const position = (row: { seq: number; runtime: number | string }): ListPosition =>
      popular ? { seq: row.seq, runtime: Number(row.runtime) } : { seq: row.seq };
    let shown = sizedPage(rows, query.limit, position, (row) => row);
    // A walk that ended at its row budget: the page ends where the walk of the scope that stopped highest did, and
    // the next page goes on from there (a page may then hold fewer templates than `limit`, or none).
    const ends = [...(plan.floors ?? []).filter((floor) => floor !== undefined), ...(await this.walkEnds(query, plan, rows))];
    if (ends.length > 0) {
      const key = (p: ListPosition) => [popular ? (p.runtime ?? 0) : 0, p.seq] as const;
      const after = (a: ListPosition, b: ListPosition) => key(a)[0] > key(b)[0] || (key(a)[0] === key(b)[0] && key(a)[1] > key(b)[1]);
      const end = ends.reduce((highest, floor) => (after(floor, highest) ? floor : highest));
      const items = shown.items.filter((row) => !after(end, position(row)));
      shown = { items, next: shown.next !== undefined && after(shown.next, end) ? shown.next : end };
    }
    const items = await Promise.all(
      shown.items.map(async (row) => {
        const json = row.body ?? (await this.bodyOf(row.id));
        return json === undefined
          ? undefined
          : { ownerId: row.owner_id, registryAuthId: row.container_registry_auth_id, ownerName: row.owner_name, json };
      }),
    );
    return { ...shown, items: items.filter((item) => item !== undefined) };
  }

  /**
   * SQLite, each walk within its row budget (`plan.walkRows`): where the walks that came back short for lack of it
   * stopped, if above the page's last row. A walk that gave the page a full page of rows needs no check; the others
   * are checked in one query, each reading at most its budget of index rows.
   */
  private async walkEnds(
    query: TemplateQuery,
    plan: SearchPlan,
    rows: { seq: number; runtime: number | string; fetched: number | string; walk: number | string; kept: number | string }[],
  ): Promise<ListPosition[]> {
    const budget = plan.walkRows;
    if (budget === undefined) return [];
    const take = query.limit + 1;
    const full = new Set(rows.filter((row) => Number(row.kept) >= take).map((row) => Number(row.walk)));
    const walks = Array.from({ length: walkCount(this.core.dialect.name, query) }, (_, k) => k).filter((k) => !full.has(k));
    if (walks.length === 0) return [];
    const popular = query.sort === 'popular';
    const lastRow = rows.at(-1);
    const last =
      lastRow !== undefined && Number(lastRow.fetched) >= take
        ? { seq: lastRow.seq, ...(popular ? { runtime: Number(lastRow.runtime) } : {}) }
        : undefined;
    const ends = await walkEndsQuery(this.core.db, query, walks, last, budget).execute();
    return ends.map((end) => ({ seq: Number(end.position), ...(popular ? { runtime: Number(end.runtime) } : {}) }));
  }

  /**
   * How a page finds its `q`, chosen per term. PostgreSQL: a term of 3 characters or more by `like`, and its planner
   * chooses between the trigram index and the scope's index, unless the index would do more work than checking
   * `searchWorkMax` rows (estimated from a sample: a frequent term, or frequent words in an order no row holds), when
   * it is walked as a short one; SQLite: through the trigram table when one of the term's
   * trigrams is in fewer than RARE rows, else down the scope's index (a frequent term fills a page in a few rows). Terms of
   * 1 or 2 characters have no trigram: they are walked, and every walk stops after WALK_ROWS rows of each scope.
   */
  async searchPlan(query: TemplateQuery): Promise<SearchPlan> {
    const term = query.search;
    if (!term && this.core.dialect.name === 'sqlite') {
      // Every walk within a row budget; together, WALK_ROWS (unless each must give a page).
      return { via: 'like', walkRows: Math.max(query.limit + 1, Math.floor(WALK_ROWS / walkCount(this.core.dialect.name, query))) };
    }
    if (!term) return { via: 'like' };
    const short = [...term].length < 3;
    if (!short && this.core.dialect.name === 'postgres') {
      const work = this.sample ? await this.sample.work(term) : 0;
      return work > this.searchWorkMax ? this.walkPlan(query) : { via: 'like' };
    }
    const trigram = short ? undefined : await rareTrigramOf(this.core.db, term);
    return trigram === undefined ? this.walkPlan(query) : { via: 'trigram', trigram };
  }

  /**
   * PostgreSQL: a page searched with `like`, given SEARCH_ATTEMPT_MS; undefined when that was not enough. Its planner
   * chooses between the trigram index and the scope's index, and neither is bounded: a term of frequent trigrams in
   * an order no row holds makes the trigram index return, and the recheck refuse, every row (332 ms at 100,000
   * templates, about 3 s at 1,000,000). Such a term is walked instead, within the row budget.
   */
  private async likeWithin(query: TemplateQuery, plan: SearchPlan) {
    if (this.core.dialect.name !== 'postgres') return undefined;
    try {
      return await this.core.db.transaction().execute(async (trx) => {
        await sql`set local statement_timeout = ${sql.lit(Math.max(1, Math.round(this.searchAttemptMs)))}`.execute(trx);
        return listQuery(trx, 'postgres', query, PAGE_MAX_BYTES, plan).execute();
      });
    } catch (error) {
      // The dialect reports a cancelled statement as `unavailable`, with PostgreSQL's error as its cause.
      const cancelled = (e: unknown) => (e as { code?: string } | undefined)?.code === '57014';
      if (cancelled(error) || cancelled((error as { cause?: unknown }).cause)) return undefined;
      throw error;
    }
  }

  /** A search that walks each scope's index, checking every row, no further than WALK_ROWS rows of it. */
  private async walkPlan(query: TemplateQuery): Promise<SearchPlan> {
    const floors: (ListPosition | undefined)[] = [];
    for (let i = 0; i < scopeCount(query); i++) {
      const walked = await walkEndQuery(this.core.db, this.core.dialect.name, query, i, WALK_ROWS).execute();
      const last = walked[0];
      floors.push(
        walked.length < 2 || !last
          ? undefined
          : { seq: Number(last.position), ...(query.sort === 'popular' ? { runtime: Number(last.runtime) } : {}) },
      );
    }
    return { via: 'walk', floors };
  }

  /**
   * Up to `limit` templates whose containerRegistryAuthId is `authId`, read down the partial index of the non-empty
   * ones (the condition `<> ''` is repeated so that both databases know the index serves the query).
   */
  async referringTo(authId: string, limit: number): Promise<{ id: string; ownerId: string; name: string }[]> {
    if (authId === '') return [];
    return this.referringQuery(authId, limit).execute();
  }

  /** Clears `authId` from templates of accounts other than its owner's, which may never name it. */
  async forgetForeignRegistryAuth(authId: string, ownerId: string): Promise<void> {
    await this.core.db
      .updateTable('templates')
      .set({ container_registry_auth_id: '' })
      .where('container_registry_auth_id', '=', authId)
      .where('owner_id', '<>', ownerId)
      .execute();
  }

  /** The SQL `referringTo` runs (tests read its plan). */
  referringToSql(authId: string, limit: number): CompiledQuery {
    return this.referringQuery(authId, limit).compile();
  }

  private referringQuery(authId: string, limit: number) {
    return this.core.db
      .selectFrom('templates')
      .select(['id', 'owner_id as ownerId', 'name'])
      .where('container_registry_auth_id', '=', authId)
      .where('container_registry_auth_id', '<>', '')
      .limit(limit);
  }

  /** The SQL of `walkEnds` (tests read its plan). */
  walkEndsSql(query: TemplateQuery, walks: number[], last: ListPosition | undefined): CompiledQuery {
    const rows = Math.max(query.limit + 1, Math.floor(WALK_ROWS / walkCount(this.core.dialect.name, query)));
    return walkEndsQuery(this.core.db, query, walks, last, rows).compile();
  }

  /** The SQL a list page runs (tests read its plan). */
  async listSql(query: TemplateQuery): Promise<CompiledQuery> {
    return listQuery(this.core.db, this.core.dialect.name, query, PAGE_MAX_BYTES, await this.searchPlan(query)).compile();
  }

  /**
   * Writes the representation of every template that has none, a batch at a time, each batch read under its rows'
   * locks so that a write by another process can't be overwritten with what it replaced. False when none was missing.
   */
  async buildMissingBodies(limit: number): Promise<boolean> {
    this.core.requireTransaction('Building representations');
    const missing = this.core.db.selectFrom('templates').select(TEMPLATE_COLUMNS).where('body', 'is', null).orderBy('seq').limit(limit);
    const rows = await (this.core.locksRows ? missing.forUpdate().skipLocked() : missing).execute();
    for (const row of rows) {
      const template = toTemplate(row);
      await this.core.db
        .updateTable('templates')
        // `search` too: a row written around the store may hold SQL's lowercasing of it (migration 0015), not ours.
        .set({ body: templateJson(template), search: searchText(template) })
        .where('seq', '=', row.seq)
        .execute();
    }
    return rows.length > 0;
  }

  // --- revisions

  async insertRevision(r: RevisionRecord): Promise<void> {
    await this.core.insertRow(INSERT_REVISION, {
      template_id: r.templateId,
      revision: r.revision,
      snapshot: JSON.stringify(r.snapshot),
      diff: JSON.stringify(r.diff),
      key_id: r.keyId,
      created_at: r.createdAt,
      image_digest: r.imageDigest,
    });
  }

  /**
   * Deletes the template's revisions numbered `upTo` and below: the oldest, down the primary key (template_id,
   * revision), which reads only the rows it deletes.
   */
  async pruneRevisions(templateId: string, upTo: number): Promise<void> {
    if (upTo < 1) return;
    await this.pruneQuery(templateId, upTo).execute();
  }

  /** The SQL `pruneRevisions` runs (tests read its plan). */
  pruneRevisionsSql(templateId: string, upTo: number): CompiledQuery {
    return this.pruneQuery(templateId, upTo).compile();
  }

  private pruneQuery(templateId: string, upTo: number) {
    return this.core.db.deleteFrom('template_revisions').where('template_id', '=', templateId).where('revision', '<=', upTo);
  }

  /** The number of the template's oldest kept revision, if it has any. */
  async oldestRevision(templateId: string): Promise<number | undefined> {
    const row = await this.core.db
      .selectFrom('template_revisions')
      .select('revision')
      .where('template_id', '=', templateId)
      .orderBy('revision', 'asc')
      .limit(1)
      .executeTakeFirst();
    return row?.revision;
  }

  async findRevision(templateId: string, revision: number): Promise<RevisionRecord | undefined> {
    const row = await this.core.db
      .selectFrom('template_revisions')
      .selectAll()
      .where('template_id', '=', templateId)
      .where('revision', '=', revision)
      .executeTakeFirst();
    return row && toRevision(row);
  }

  /** Newest first, within PAGE_MAX_BYTES (see core.ts `SIZED`); `before` is a revision number. */
  async listRevisions(templateId: string, limit: number, before?: number): Promise<Page<RevisionRecord>> {
    const rows = await this.core.db
      .with('candidates', (qb) => {
        let select = qb
          .selectFrom('template_revisions')
          .select(['revision as position', sql<number>`octet_length(snapshot) + octet_length(diff)`.as('size')])
          .where('template_id', '=', templateId);
        // Revision numbers are 32-bit integers; a larger cursor position starts from the newest.
        if (before !== undefined) select = select.where('revision', '<', Math.min(before, 2 ** 31 - 1));
        return select.orderBy('revision', 'desc').limit(limit + 1);
      })
      .with('sized', (qb) => qb.selectFrom('candidates').select(SIZED))
      .selectFrom('sized')
      .innerJoin('template_revisions', (join) =>
        join.onRef('template_revisions.revision', '=', 'sized.position').on('template_revisions.template_id', '=', templateId),
      )
      // The author: the account of the key that made the revision.
      .leftJoin('api_keys', 'api_keys.id', 'template_revisions.key_id')
      .leftJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .selectAll('template_revisions')
      .select(['sized.fetched', 'accounts.name as author', 'api_keys.label as keyLabel'])
      .where(withinBudget(PAGE_MAX_BYTES))
      .orderBy('template_revisions.revision', 'desc')
      .execute();
    return sizedPage(
      rows,
      limit,
      (row) => row.revision,
      (row) => ({ ...toRevision(row), author: row.author ?? '', keyLabel: row.keyLabel ?? '' }),
    );
  }
}
