import type { CompiledQuery } from 'kysely';
import type { ImageCheck } from '../../domain/image-check.ts';
import { type TemplateRecord, templateJson } from '../../domain/template.ts';
import type { Core } from '../core.ts';

// The queue of image checks, kept in the template rows (migration 0022): a check is due, claimed under a lease by one
// process at a time, and settled with its result (which the row's representation shows) or put off for a retry.
// The digest each revision is pinned to lives in its revision's row.

/** What the root store may do with image checks: read. Writes are a transaction's (store.ts). */
export type ImageCheckReads = Pick<ImageCheckRepository, 'queued' | 'dueSql'>;

/** A check taken from the queue: the template, the revision it was asked at, and its attempts so far. */
export interface ClaimedCheck {
  templateId: string;
  revision: number;
  attempts: number;
}

/** Where a template stands in the queue. */
export interface QueuedCheck {
  dueAt: string | null;
  leasedUntil: string | null;
  lease: string | null;
  revision: number;
  attempts: number;
}

export class ImageCheckRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  /** Asks for a check of the template at `revision`, due `at` (in the transaction of the change that asks). */
  async request(templateId: string, revision: number, at: string): Promise<void> {
    this.core.requireTransaction('Asking for an image check');
    await this.core.db
      .updateTable('templates')
      .set({ image_check_due_at: at, image_check_attempts: 0, image_check_revision: revision })
      .where('id', '=', templateId)
      .execute();
  }

  /** The template's check at `revision` is answered already (a repin's): any due, or under way, is not wanted. */
  async answered(templateId: string, revision: number): Promise<void> {
    this.core.requireTransaction('Answering an image check');
    await this.core.db
      .updateTable('templates')
      .set({ image_check_due_at: null, image_check_attempts: 0, image_check_revision: revision })
      .where('id', '=', templateId)
      .execute();
  }

  /**
   * Takes up to `limit` due checks no other process holds, oldest due first, and holds them until `leaseUntil` under
   * `lease`. On PostgreSQL, rows another process is claiming at this moment are skipped.
   */
  async claimDue(now: string, leaseUntil: string, lease: string, limit: number): Promise<ClaimedCheck[]> {
    this.core.requireTransaction('Claiming image checks');
    const ids = (await this.dueQuery(now, limit).execute()).map((row) => row.id);
    if (ids.length === 0) return [];
    return this.lease(ids, now, leaseUntil, lease);
  }

  /** Takes the due check of one template, unless another process holds it. */
  async claim(templateId: string, now: string, leaseUntil: string, lease: string): Promise<ClaimedCheck | undefined> {
    this.core.requireTransaction('Claiming an image check');
    const [claimed] = await this.lease([templateId], now, leaseUntil, lease);
    return claimed;
  }

  private async lease(ids: string[], now: string, leaseUntil: string, lease: string): Promise<ClaimedCheck[]> {
    const rows = await this.core.db
      .updateTable('templates')
      .set((eb) => ({
        image_check_leased_until: leaseUntil,
        image_check_lease: lease,
        image_check_attempts: eb('image_check_attempts', '+', 1),
      }))
      .where('id', 'in', ids)
      .where('image_check_due_at', 'is not', null)
      .where('image_check_due_at', '<=', now)
      .where((eb) => eb.or([eb('image_check_leased_until', 'is', null), eb('image_check_leased_until', '<', now)]))
      .returning(['id', 'image_check_revision', 'image_check_attempts'])
      .execute();
    return rows.map((row) => ({ templateId: row.id, revision: row.image_check_revision, attempts: row.image_check_attempts }));
  }

  /** The SQL that finds the checks `claimDue` takes (tests read its plan). */
  dueSql(now: string, limit: number): CompiledQuery {
    return this.dueQuery(now, limit).compile();
  }

  /** Down the partial index of the due checks (migration 0022): templates with nothing due cost nothing. */
  private dueQuery(now: string, limit: number) {
    const due = this.core.db
      .selectFrom('templates')
      .select('id')
      .where('image_check_due_at', 'is not', null)
      .where('image_check_due_at', '<=', now)
      .where((eb) => eb.or([eb('image_check_leased_until', 'is', null), eb('image_check_leased_until', '<', now)]))
      .orderBy('image_check_due_at')
      .limit(limit);
    return this.core.locksRows ? due.forUpdate().skipLocked() : due;
  }

  /** Where the template stands in the queue; undefined once it is deleted. */
  async queued(templateId: string): Promise<QueuedCheck | undefined> {
    const row = await this.core.db
      .selectFrom('templates')
      .select(['image_check_due_at', 'image_check_leased_until', 'image_check_lease', 'image_check_revision', 'image_check_attempts'])
      .where('id', '=', templateId)
      .executeTakeFirst();
    return (
      row && {
        dueAt: row.image_check_due_at,
        leasedUntil: row.image_check_leased_until,
        lease: row.image_check_lease,
        revision: row.image_check_revision,
        attempts: row.image_check_attempts,
      }
    );
  }

  /**
   * Ends the hold of `lease` on the template's check (false if it no longer holds it): with `check`, its result is
   * written (the template's representation built again); `dueAt` is when the next attempt is due (null: none is).
   */
  async settle(template: TemplateRecord, lease: string, outcome: { check?: ImageCheck; dueAt: string | null }): Promise<boolean> {
    this.core.requireTransaction('Settling an image check');
    const shown = outcome.check && { ...template, imageCheck: outcome.check };
    const result = await this.core.db
      .updateTable('templates')
      .set({
        image_check_due_at: outcome.dueAt,
        image_check_leased_until: null,
        image_check_lease: null,
        ...(outcome.dueAt === null ? { image_check_attempts: 0 } : {}),
        ...(shown && {
          image_check_status: shown.imageCheck.status,
          image_checked_at: shown.imageCheck.checkedAt,
          image_digest: shown.imageCheck.digest,
          image_platforms: JSON.stringify(shown.imageCheck.platforms),
          image_size_bytes: shown.imageCheck.sizeBytes,
          image_cuda_version: shown.imageCheck.cudaVersion,
          image_check_reason: shown.imageCheck.reason,
          body: templateJson(shown),
        }),
      })
      .where('id', '=', template.id)
      .where('image_check_lease', '=', lease)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Pins the template's revisions from `fromRevision` on that have no digest yet (they show the image checked). */
  async pin(templateId: string, fromRevision: number, digest: string): Promise<void> {
    this.core.requireTransaction('Pinning a digest');
    await this.core.db
      .updateTable('template_revisions')
      .set({ image_digest: digest })
      .where('template_id', '=', templateId)
      .where('revision', '>=', fromRevision)
      .where('image_digest', 'is', null)
      .execute();
  }
}
