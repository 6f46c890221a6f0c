import { type CompiledQuery, type Selectable, sql } from 'kysely';
import {
  type EndpointRecord,
  endpointNameTaken,
  FINISHED_STATUSES,
  type ReleaseRecord,
  type ReleaseStatus,
  templateAlreadyBound,
} from '../domain/endpoint.ts';
import { fold } from '../domain/name.ts';
import { PAGE_MAX_BYTES, type Page } from '../domain/page.ts';
import { type Core, page, SIZED, sizedPage, withinBudget } from './core.ts';
import type { EndpointsTable, ReleasesTable } from './schema.ts';

// Endpoints and their releases: one aggregate, one repository. Binding is a column of the template row.

/** What the root store may do with endpoints: read. Writes are a transaction's (store.ts). */
export type EndpointReads = Pick<EndpointRepository, 'find' | 'list' | 'prunableReleasesSql' | 'findRelease' | 'listReleases'>;

export class EndpointRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  /** Binds the template and creates the endpoint, together (inside the caller's transaction). */
  async create(endpoint: EndpointRecord): Promise<void> {
    this.core.requireTransaction('Creating an endpoint');
    const bound = await this.core.db
      .updateTable('templates')
      .set({ endpoint_id: endpoint.id })
      .where('id', '=', endpoint.templateId)
      .where('endpoint_id', 'is', null)
      .executeTakeFirst();
    if (bound.numUpdatedRows === 0n) throw templateAlreadyBound();
    await this.core.unique(this.core.db.insertInto('endpoints').values(toEndpointRow(endpoint)).execute(), endpointNameTaken);
  }

  /** The endpoint; with `lock`, its row stays locked against other writers until the transaction ends. */
  async find(id: string, options: { lock?: boolean } = {}): Promise<EndpointRecord | undefined> {
    let select = this.core.db.selectFrom('endpoints').selectAll().where('id', '=', id);
    if (options.lock && this.core.locksRows) select = select.forUpdate();
    const row = await select.executeTakeFirst();
    return row && toEndpoint(row);
  }

  /** Writes the endpoint's name and workers; a name its owner already uses is a conflict naming `/name`. */
  async update(endpoint: EndpointRecord): Promise<void> {
    this.core.requireTransaction('Updating an endpoint');
    const change = this.core.db
      .updateTable('endpoints')
      .set({
        name: endpoint.name,
        name_key: fold(endpoint.name),
        template_id: endpoint.templateId,
        workers_min: endpoint.workersMin,
        workers_max: endpoint.workersMax,
        updated_at: endpoint.updatedAt,
      })
      .where('id', '=', endpoint.id)
      .execute();
    await this.core.unique(change, endpointNameTaken);
  }

  /** Moves the endpoint's binding from one template to another, which must be unbound (inside the caller's transaction). */
  async rebind(endpointId: string, from: string, to: string): Promise<void> {
    this.core.requireTransaction('Rebinding an endpoint');
    await this.core.db
      .updateTable('templates')
      .set({ endpoint_id: null })
      .where('id', '=', from)
      .where('endpoint_id', '=', endpointId)
      .execute();
    const bound = await this.core.db
      .updateTable('templates')
      .set({ endpoint_id: endpointId })
      .where('id', '=', to)
      .where('endpoint_id', 'is', null)
      .executeTakeFirst();
    if (bound.numUpdatedRows === 0n) throw templateAlreadyBound();
  }

  async list(ownerId: string, limit: number, before?: number): Promise<Page<EndpointRecord>> {
    let select = this.core.db.selectFrom('endpoints').selectAll().where('owner_id', '=', ownerId);
    if (before !== undefined) select = select.where('seq', '<', before);
    const rows = await select
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    return page(rows, limit, (row) => row.seq, toEndpoint);
  }

  /**
   * Deletes the endpoint and unbinds its template, together (inside the caller's transaction), with its releases and
   * their events, delivered or not; false when it is gone.
   */
  async delete(id: string): Promise<boolean> {
    this.core.requireTransaction('Deleting an endpoint');
    await this.core.db.deleteFrom('outbox').where('ordering_key', '=', id).execute();
    // The template row first, then the endpoint's: the order every writer of both takes, so none deadlock.
    const unbound = await this.core.db
      .updateTable('templates')
      .set({ endpoint_id: null })
      .where('endpoint_id', '=', id)
      .returning('id')
      .execute();
    const deleted = await this.core.db.deleteFrom('endpoints').where('id', '=', id).executeTakeFirst();
    return unbound.length > 0 || deleted.numDeletedRows > 0n;
  }

  // --- releases

  /** Records a new release of the endpoint: supersedes its unfinished ones and moves its version on. */
  async insertRelease(release: ReleaseRecord): Promise<void> {
    this.core.requireTransaction('Starting a release');
    await this.core.db
      .updateTable('releases')
      .set({ status: 'superseded', updated_at: release.createdAt })
      .where('endpoint_id', '=', release.endpointId)
      .where('status', 'in', ['pending', 'rolling'])
      .execute();
    await this.core.db
      .updateTable('endpoints')
      .set({ version: release.version, updated_at: release.createdAt })
      .where('id', '=', release.endpointId)
      .execute();
    await this.core.db
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
        previous_template_id: release.previousTemplateId,
        image_digest: release.imageDigest,
      })
      .execute();
  }

  /**
   * Deletes the endpoint's finished releases of version `upTo` and below, with their outbox events, delivered or not
   * (the kept releases are the newest, whatever made them; an event that was never delivered is announced by its
   * successors); at most `limit` of them, which a change's one new release keeps up with. Read down the
   * (endpoint_id, version) key and outbox_subject.
   */
  async pruneReleases(endpointId: string, upTo: number, limit: number): Promise<void> {
    this.core.requireTransaction('Pruning releases');
    if (upTo < 1) return;
    const ids = (await this.prunableQuery(endpointId, upTo, limit).execute()).map((row) => row.id);
    if (ids.length === 0) return;
    await this.core.db.deleteFrom('outbox').where('subject_id', 'in', ids).execute();
    await this.core.db.deleteFrom('releases').where('id', 'in', ids).execute();
  }

  /** The SQL that finds the releases `pruneReleases` deletes (tests read its plan). */
  prunableReleasesSql(endpointId: string, upTo: number, limit: number): CompiledQuery {
    return this.prunableQuery(endpointId, upTo, limit).compile();
  }

  private prunableQuery(endpointId: string, upTo: number, limit: number) {
    return this.core.db
      .selectFrom('releases as r')
      .select('r.id')
      .where('r.endpoint_id', '=', endpointId)
      .where('r.version', '<=', upTo)
      .where('r.status', 'in', FINISHED_STATUSES)
      .orderBy('r.version')
      .limit(limit);
  }

  /** The release; with `lock`, its row stays locked against other writers until the transaction ends. */
  async findRelease(id: string, options: { lock?: boolean } = {}): Promise<ReleaseRecord | undefined> {
    let select = this.core.db.selectFrom('releases').selectAll().where('id', '=', id);
    if (options.lock && this.core.locksRows) select = select.forUpdate();
    const row = await select.executeTakeFirst();
    return row && toRelease(row);
  }

  /** Newest first, within PAGE_MAX_BYTES (see core.ts `SIZED`). */
  async listReleases(endpointId: string, limit: number, before?: number): Promise<Page<ReleaseRecord>> {
    const rows = await this.core.db
      .with('candidates', (qb) => {
        let select = qb
          .selectFrom('releases')
          .select(['seq as position', sql<number>`octet_length(diff) + 512`.as('size')])
          .where('endpoint_id', '=', endpointId);
        if (before !== undefined) select = select.where('seq', '<', before);
        return select.orderBy('seq', 'desc').limit(limit + 1);
      })
      .with('sized', (qb) => qb.selectFrom('candidates').select(SIZED))
      .selectFrom('sized')
      .innerJoin('releases', 'releases.seq', 'sized.position')
      .selectAll('releases')
      .select('sized.fetched')
      .where(withinBudget(PAGE_MAX_BYTES))
      .orderBy('releases.seq', 'desc')
      .execute();
    return sizedPage(rows, limit, (row) => row.seq, toRelease);
  }

  async updateReleaseProgress(r: Pick<ReleaseRecord, 'id' | 'status' | 'workersUpdated' | 'workersTotal' | 'updatedAt'>): Promise<void> {
    await this.core.db
      .updateTable('releases')
      .set({ status: r.status, workers_updated: r.workersUpdated, workers_total: r.workersTotal, updated_at: r.updatedAt })
      .where('id', '=', r.id)
      .execute();
  }
}

function toEndpointRow(e: EndpointRecord): Omit<Selectable<EndpointsTable>, 'seq'> {
  return {
    id: e.id,
    owner_id: e.ownerId,
    name_key: fold(e.name),
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
    previousTemplateId: row.previous_template_id,
    imageDigest: row.image_digest,
  };
}
