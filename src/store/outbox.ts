import { type CompiledQuery, sql } from 'kysely';
import type { DeliveryState } from '../domain/endpoint.ts';
import type { OutboxBacklog, OutboxEntry, OutboxEvent } from '../domain/outbox.ts';
import type { Core } from './core.ts';

// The transactional outbox: events written beside the change they announce, then claimed, leased and sent.

/** What the root store may do with the outbox: read. Writes are a transaction's (store.ts). */
export type OutboxReads = Pick<OutboxRepository, 'dueSql' | 'deliveries' | 'purgeSql' | 'backlog'>;

export class OutboxRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  async enqueue(event: OutboxEntry): Promise<void> {
    await this.core.db
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
    this.core.requireTransaction('Claiming events');
    const due = this.dueQuery(now, limit);
    const seqs = (await due.execute()).map((r) => r.seq);
    if (seqs.length === 0) return [];
    const rows = await this.core.db
      .updateTable('outbox')
      .set((eb) => ({ leased_until: leaseUntil, lease_token: leaseToken, attempts: eb('attempts', '+', 1) }))
      .where('seq', 'in', seqs)
      .returning(['seq', 'event_id', 'type', 'payload', 'attempts'])
      .execute();
    return rows
      .map((r) => ({ seq: Number(r.seq), eventId: r.event_id, type: r.type, payload: r.payload, attempts: r.attempts }))
      .sort((a, b) => a.seq - b.seq);
  }

  /** The SQL that finds the events `claimDue` takes (tests read its plan). */
  dueSql(now: string, limit: number): CompiledQuery {
    return this.dueQuery(now, limit).compile();
  }

  /**
   * The due events, first in line for their ordering key, oldest first: down the partial indexes of the undelivered
   * events (migration 0009), so that a million delivered ones cost the deliverer nothing.
   */
  private dueQuery(now: string, limit: number) {
    const due = this.core.db
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
    return this.core.locksRows ? due.forUpdate().skipLocked() : due;
  }

  /** Records a delivery, if `leaseToken` still holds the event's lease; false otherwise. */
  async markDelivered(seq: number, leaseToken: string, at: string): Promise<boolean> {
    const result = await this.core.db
      .updateTable('outbox')
      .set({ delivered_at: at, leased_until: null, lease_token: null, last_error: null })
      .where('seq', '=', seq)
      .where('lease_token', '=', leaseToken)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Records a failed attempt and when to try again, if `leaseToken` still holds the event's lease. */
  async markFailed(seq: number, leaseToken: string, error: string, nextAttemptAt: string): Promise<boolean> {
    const result = await this.core.db
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
    const rows = await this.core.db
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

  /** Purges up to `limit` of the events delivered before `at`, oldest first (down their partial index); how many. */
  async purgeDelivered(at: string, limit: number): Promise<number> {
    const result = await this.purgeQuery(at, limit).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The SQL `purgeDelivered` runs (tests read its plan). */
  purgeSql(at: string, limit: number): CompiledQuery {
    return this.purgeQuery(at, limit).compile();
  }

  /**
   * PostgreSQL takes the batch as an array (`seq = any(array(…))`): with `in (…)` it may join the batch to the whole
   * table by hashing, reading every row to delete a thousand.
   */
  private purgeQuery(at: string, limit: number) {
    const oldest = this.core.db
      .selectFrom('outbox')
      .select('seq')
      .where('delivered_at', 'is not', null)
      .where('delivered_at', '<', at)
      .orderBy('delivered_at')
      .limit(limit);
    const purge = this.core.db.deleteFrom('outbox');
    return this.core.dialect.name === 'postgres'
      ? purge.where('seq', '=', sql<number>`any(array(${oldest}))`)
      : purge.where('seq', 'in', oldest);
  }

  async backlog(): Promise<OutboxBacklog> {
    const row = await this.core.db
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
}
