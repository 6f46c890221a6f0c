import { type CompiledQuery, type Selectable, sql } from 'kysely';
import { PAGE_MAX_BYTES, type Page } from '../domain/page.ts';
import type { RevisionRecord } from '../domain/revision.ts';
import { type TemplateRecord, type TemplateView, templateJson, templateNameTaken } from '../domain/template.ts';
import { type Core, SIZED, sizedPage, withinBudget } from './core.ts';
import type { TemplateRevisionsTable, TemplatesTable } from './schema.ts';
import { listQuery, type TemplateQuery } from './template-list.ts';

// The templates and their revisions: one aggregate, one repository.

/** Every column of a template row, named (prepared statements must not select `*`). */
export const TEMPLATE_COLUMNS = [
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

/** A template of a list page: its owner (who decides what it shows) and its JSON text. */
export interface ListedTemplate {
  ownerId: string;
  json: string;
}

const VIEW_COLUMNS = ['id', 'owner_id', 'endpoint_id', 'is_public', 'is_platform', 'revision', 'body'] as const;
type ViewRow = Pick<Selectable<TemplatesTable>, (typeof VIEW_COLUMNS)[number]>;

export class TemplateRepository {
  constructor(private readonly core: Core) {}

  async insert(template: TemplateRecord): Promise<void> {
    await this.core.unique(this.core.insertRow('insertTemplate', 'templates', toRow(template)), templateNameTaken);
  }

  /** The template; with `lock`, its row stays locked against other writers until the transaction ends. */
  async find(id: string, options: { lock?: boolean } = {}): Promise<TemplateRecord | undefined> {
    const lock = options.lock === true && this.core.locksRows;
    const [row] = await this.core.precompiled<Selectable<TemplatesTable>>(
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
  async findView(id: string): Promise<TemplateView | undefined> {
    const [row] = await this.core.precompiled<ViewRow>(
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

  /** Deletes an unbound template still at `revision`; false when it is gone, bound, or has moved on. */
  async delete(id: string, revision: number): Promise<boolean> {
    const result = await this.core.db
      .deleteFrom('templates')
      .where('id', '=', id)
      .where('revision', '=', revision)
      .where('endpoint_id', 'is', null)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
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
   * scope is read down its own index and the pages merged (see template-list.ts).
   */
  async list(query: TemplateQuery): Promise<Page<ListedTemplate>> {
    const rows = await listQuery(this.core.db, query, PAGE_MAX_BYTES).execute();
    const shown = sizedPage(
      rows,
      query.limit,
      (row) => row.seq,
      (row) => row,
    );
    const items = await Promise.all(
      shown.items.map(async (row) => {
        const json = row.body ?? (await this.bodyOf(row.id));
        return json === undefined ? undefined : { ownerId: row.owner_id, json };
      }),
    );
    return { ...shown, items: items.filter((item) => item !== undefined) };
  }

  /**
   * Up to `limit` templates whose containerRegistryAuthId is `authId`, read down the partial index of the non-empty
   * ones (the condition `<> ''` is repeated so that both databases know the index serves the query).
   */
  async referringTo(authId: string, limit: number): Promise<{ id: string; ownerId: string; name: string }[]> {
    if (authId === '') return [];
    return this.referringQuery(authId, limit).execute();
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

  /** The SQL a list page runs (tests read its plan). */
  listSql(query: TemplateQuery): CompiledQuery {
    return listQuery(this.core.db, query, PAGE_MAX_BYTES).compile();
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
      await this.core.db
        .updateTable('templates')
        .set({ body: templateJson(toTemplate(row)) })
        .where('seq', '=', row.seq)
        .execute();
    }
    return rows.length > 0;
  }

  // --- revisions

  async insertRevision(r: RevisionRecord): Promise<void> {
    await this.core.insertRow('insertRevision', 'template_revisions', {
      template_id: r.templateId,
      revision: r.revision,
      snapshot: JSON.stringify(r.snapshot),
      diff: JSON.stringify(r.diff),
      key_id: r.keyId,
      created_at: r.createdAt,
    });
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
      .select(['sized.fetched', 'accounts.name as author'])
      .where(withinBudget(PAGE_MAX_BYTES))
      .orderBy('template_revisions.revision', 'desc')
      .execute();
    return sizedPage(
      rows,
      limit,
      (row) => row.revision,
      (row) => ({ ...toRevision(row), author: row.author ?? '' }),
    );
  }
}

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
