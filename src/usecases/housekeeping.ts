import { setImmediate as turn } from 'node:timers/promises';
import { KEYS_FORGOTTEN_AFTER_DAYS } from '../domain/quota.ts';
import { IDEMPOTENCY_RETENTION_MS } from '../store/idempotency.ts';
import type { Store } from '../store/store.ts';

// Housekeeping: what the database would otherwise keep for ever, purged in small batches on a timer.

export interface HousekeepingOptions {
  /** Delivered webhook events are purged this many days after their delivery (OUTBOX_RETENTION_DAYS). */
  outboxRetentionDays: number;
  /** Rows deleted by one statement: small, so that no purge holds the database (or SQLite's one writer) for long. */
  batch?: number;
  /** Batches one run deletes at most of each kind; what is left waits for the next run. */
  mostBatches?: number;
}

/** What one run of housekeeping removed. */
export interface Swept {
  deliveredEvents: number;
  expiredResponses: number;
  /** API keys revoked or expired more than KEYS_FORGOTTEN_AFTER_DAYS ago. */
  forgottenKeys: number;
  idleBuckets: number;
  changes: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** SQLite's change table keeps this many of its last rows (store/changes.ts). */
const CHANGES_KEPT = 10_000;

/**
 * What keeps the database from growing for ever: delivered outbox events past their retention, responses kept for
 * Idempotency-Keys past their 24 hours, API keys ended (revoked or expired) over 30 days ago, idle rate-limit buckets,
 * SQLite's old change rows. Each is deleted a small
 * batch per statement, the event loop turning between batches, from a timer that never keeps the process alive.
 */
export class Housekeeping {
  private timer?: NodeJS.Timeout;
  private running?: Promise<Swept | undefined>;
  private readonly batch: number;
  private readonly mostBatches: number;

  private readonly store: Store;
  private readonly options: HousekeepingOptions;

  constructor(store: Store, options: HousekeepingOptions) {
    this.store = store;
    this.options = options;
    this.batch = options.batch ?? 1000;
    this.mostBatches = options.mostBatches ?? 100;
  }

  /** One run now; a run already under way is not doubled (its result is the answer). */
  run(at = Date.now()): Promise<Swept | undefined> {
    this.running ??= this.sweep(at).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Runs every `everyMs` until stopped; a failed run (the database unreachable) waits for the next. */
  start(everyMs = 60_000): void {
    this.timer ??= setInterval(() => this.run().catch(() => {}), everyMs).unref();
  }

  /** Stops the timer, and waits for a run under way to end. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => {});
  }

  private async sweep(at: number): Promise<Swept> {
    const deliveredBefore = new Date(at - this.options.outboxRetentionDays * DAY_MS).toISOString();
    const respondedBefore = new Date(at - IDEMPOTENCY_RETENTION_MS).toISOString();
    const endedBefore = new Date(at - KEYS_FORGOTTEN_AFTER_DAYS * DAY_MS).toISOString();
    return {
      deliveredEvents: await this.batches((limit) => this.store.transaction((tx) => tx.outbox.purgeDelivered(deliveredBefore, limit))),
      expiredResponses: await this.batches((limit) => this.store.transaction((tx) => tx.idempotency.forgetBefore(respondedBefore, limit))),
      forgottenKeys: await this.batches((limit) => this.store.transaction((tx) => tx.accounts.forgetEndedKeys(endedBefore, limit))),
      idleBuckets: this.store.shared ? await this.store.transaction((tx) => tx.rateBuckets.forgetIdle(60_000)) : 0,
      changes: await this.store.trimChanges(CHANGES_KEPT),
    };
  }

  private async batches(remove: (limit: number) => Promise<number>): Promise<number> {
    let removed = 0;
    for (let n = 0; n < this.mostBatches; n++) {
      const done = await remove(this.batch);
      removed += done;
      if (done < this.batch) break;
      await turn();
    }
    return removed;
  }
}
