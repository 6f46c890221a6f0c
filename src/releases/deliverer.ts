import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { OutboxEvent } from '../domain/outbox.ts';
import type { Store } from '../store/store.ts';
import { signature } from './signature.ts';

// The deliverer: sends the outbox's release webhooks, signed, retried with backoff until acknowledged.

export interface DelivererOptions {
  /** Where release webhooks are POSTed. */
  url: string;
  secret: string;
  /** A receiver that has not answered within this time has failed this attempt. */
  timeoutMs: number;
  /** The first retry waits about this long; each further retry twice as long, up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** How often the outbox is looked at. */
  pollMs: number;
}

const BATCH = 16;

/** The wait before the next attempt after `attempts` failed ones: exponential, capped, with jitter (half to full). */
export function backoffMs(attempts: number, baseMs: number, maxMs: number, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempts - 1, 30));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/**
 * Sends the outbox's events as signed webhooks, at least once, until the receiver acknowledges each with a 2xx.
 * The releases of one endpoint go in the order they were made: the next waits until the one before is delivered.
 * Any number of processes may run one: each event is leased to one deliverer at a time, longer than an attempt
 * can take, so no two send it at once; an event whose deliverer died is taken up again when its lease ends.
 */
export class Deliverer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  private readonly store: Store;
  private readonly options: DelivererOptions;
  private readonly log: FastifyBaseLogger;

  constructor(store: Store, options: DelivererOptions, log: FastifyBaseLogger) {
    this.store = store;
    this.options = options;
    this.log = log;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops taking events and waits for the attempts under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.deliverDue()
        .catch((error) => this.log.warn({ err: error }, 'outbox: could not read due events'))
        .then((busy) => this.schedule(busy ? 0 : this.options.pollMs));
    }, delay);
  }

  /** Delivers the events that are due; true when there may be more right away. */
  async deliverDue(): Promise<boolean> {
    const now = Date.now();
    const leaseMs = this.options.timeoutMs * 2 + 5000;
    const lease = randomUUID();
    const [from, until] = [new Date(now).toISOString(), new Date(now + leaseMs).toISOString()];
    const events = await this.store.transaction((tx) => tx.outbox.claimDue(from, until, lease, BATCH));
    await Promise.all(events.map((event) => this.deliver(event, lease)));
    return events.length === BATCH;
  }

  private async deliver(event: OutboxEvent, lease: string): Promise<void> {
    const timestamp = Math.floor(Date.now() / 1000);
    let failure: string;
    try {
      const response = await fetch(this.options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'podplate-webhooks/1',
          'webhook-id': event.eventId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature(this.options.secret, event.eventId, timestamp, event.payload),
        },
        body: event.payload,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await response.body?.cancel();
      if (response.ok) {
        await this.store.transaction((tx) => tx.outbox.markDelivered(event.seq, lease, new Date().toISOString()));
        this.log.info({ eventId: event.eventId, attempts: event.attempts }, 'webhook delivered');
        return;
      }
      failure = `HTTP ${response.status}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      failure =
        error instanceof Error && error.name === 'TimeoutError'
          ? `no answer within ${this.options.timeoutMs} ms`
          : (cause?.code ?? (error as Error).message);
    }
    const next = new Date(Date.now() + backoffMs(event.attempts, this.options.retryBaseMs, this.options.retryMaxMs)).toISOString();
    this.log.warn({ eventId: event.eventId, attempts: event.attempts, error: failure, nextAttemptAt: next }, 'webhook delivery failed');
    await this.store
      .transaction((tx) => tx.outbox.markFailed(event.seq, lease, failure, next))
      .catch((error) => this.log.warn({ err: error }, 'outbox: could not record a failure'));
  }
}
