import type { UsageRecord } from '../domain/usage.ts';
import type { Core } from './core.ts';

// Usage reports, each counted once: the record of a usageId is what makes a repeated report count nothing.

/** What the root store may do with usage reports: read. Writes are a transaction's (store.ts). */
export type UsageReads = Pick<UsageRepository, 'find'>;

export class UsageRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  /** Records a report; false (and nothing changes) when its usageId was recorded before. */
  async insert(usage: UsageRecord): Promise<boolean> {
    const inserted = await this.core.db
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
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async find(usageId: string): Promise<UsageRecord | undefined> {
    const row = await this.core.db.selectFrom('usage_reports').selectAll().where('usage_id', '=', usageId).executeTakeFirst();
    return (
      row && {
        usageId: row.usage_id,
        templateId: row.template_id,
        runtimeInMin: Number(row.runtime_in_min),
        earned: row.earned,
        createdAt: row.created_at,
      }
    );
  }
}
