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
        account_id: event.accountId,
        payload: event.payload,
        created_at: event.createdAt,
        next_attempt_at: event.createdAt,
      })
      .execute();
  }

  /**
   * Takes up to `limit` events that are due, not held by another deliverer, and first in line for their ordering
   * key (no older event with that key is still undelivered), the accounts taking turns (each account's oldest first,
   * then each one's second …), and holds them until `leaseUntil` under `leaseToken`. A row another deliverer leased
   * meanwhile is not taken again: the update asks anew that it be free.
   */
  async claimDue(now: string, leaseUntil: string, leaseToken: string, limit: number): Promise<OutboxEvent[]> {
    this.core.requireTransaction('Claiming events');
    const seqs = (await this.dueQuery(now, limit).execute()).map((r) => r.seq);
    if (seqs.length === 0) return [];
    const rows = await this.core.db
      .updateTable('outbox')
      .set((eb) => ({ leased_until: leaseUntil, lease_token: leaseToken, attempts: eb('attempts', '+', 1) }))
      .where('seq', 'in', seqs)
      .where('delivered_at', 'is', null)
      .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<', now)]))
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
   * The due events, first in line for their ordering key, the accounts in turn: down the partial indexes of the
   * undelivered events (migrations 0009, 0019), so that a million delivered ones cost the deliverer nothing.
   * PostgreSQL takes the first undelivered event of each key in one pass (`distinct on`): asked as "no earlier one
   * is undelivered", its planner, with statistics from before a burst of events (analyzed while none was pending),
   * checked each event against every other, 157 ms for 1,000 pending beside 100,000 delivered.
   */
  private dueQuery(now: string, limit: number) {
    const db = this.core.db;
    const first =
      this.core.dialect.name === 'postgres'
        ? db
            .selectFrom('outbox')
            .distinctOn('ordering_key')
            .select(['seq', 'account_id', 'next_attempt_at', 'leased_until'])
            .where('delivered_at', 'is', null)
            .orderBy('ordering_key')
            .orderBy('seq')
        : db
            .selectFrom('outbox as o')
            .select(['o.seq', 'o.account_id', 'o.next_attempt_at', 'o.leased_until'])
            .where('o.delivered_at', 'is', null)
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
            );
    return db
      .selectFrom(first.as('o'))
      .select(['o.seq', sql<number>`row_number() over (partition by o.account_id order by o.seq)`.as('turn')])
      .where('o.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('o.leased_until', 'is', null), eb('o.leased_until', '<', now)]))
      .orderBy('turn')
      .orderBy('o.seq')
      .limit(limit);
  }

  /** Records a delivery, if `leaseToken` still holds the event's lease; false otherwise. */
  async markDelivered(seq: number, leaseToken: string, at: string): Promise<boolean> {
    const result = await this.core.db
      .updateTable('outbox')
      // The payload is sent: it is kept no longer (only the delivery's record, for the release's state).
      .set({ delivered_at: at, leased_until: null, lease_token: null, last_error: null, payload: '' })
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

  /** The undelivered events: counted down their partial indexes, reading no row but the oldest's (migration 0019). */
  async backlog(): Promise<OutboxBacklog> {
    const pending = this.core.db
      .selectFrom('outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('delivered_at', 'is', null);
    const [counts] = await this.core.db
      .selectNoFrom((eb) => [
        eb.selectFrom(pending.as('p')).select('n').as('pending'),
        eb
          .selectFrom('outbox')
          .select((f) => f.fn.countAll<number>().as('n'))
          .where('delivered_at', 'is', null)
          .where('last_error', 'is not', null)
          .as('failing'),
        eb.selectFrom('outbox').select('created_at').where('delivered_at', 'is', null).orderBy('seq').limit(1).as('oldest'),
      ])
      .execute();
    return {
      pending: Number(counts?.pending ?? 0),
      failing: Number(counts?.failing ?? 0),
      oldest: (counts?.oldest as string | null) ?? null,
    };
  }

  /** Removes the events about these subjects (releases), delivered or not: what they describe is gone. */
  async forgetAbout(subjectIds: string[]): Promise<void> {
    if (subjectIds.length > 0) await this.core.db.deleteFrom('outbox').where('subject_id', 'in', subjectIds).execute();
  }

  /** Removes the events of an endpoint (its ordering key), delivered or not, before the endpoint goes. */
  async forgetEndpoint(endpointId: string): Promise<void> {
    await this.core.db.deleteFrom('outbox').where('ordering_key', '=', endpointId).execute();
  }
}
