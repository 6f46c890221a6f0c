import type { RateBucketRepository } from '../store/rate-buckets.ts';

// Rate limits as token buckets: a bucket allows `perMinute` a minute, in bursts of as many.
//
// One process alone with its database (SQLite) keeps its buckets in memory, exactly. Processes that share a
// database (PostgreSQL) share the buckets through it (store/rate-buckets.ts) without writing it per request: a
// process takes a lease of tokens, spends them itself, and takes more when they are gone. Tokens are debited from
// the shared bucket when leased, so all processes together never spend more than the bucket gives; what a process
// leased and has not spent yet may be spent a little later than a single bucket would allow, at most one second's
// worth of the limit per process (the largest lease). A key rarely used leases one token at a time. Measured
// alternative: rate-limiter-flexible's PostgreSQL limiter writes the database on every request, 368-1,022 a
// second on one key here, a tenth of what one process serves (see docs/performance.md).

const MAX_BUCKETS = 100_000;

/** Takes tokens from a bucket every process shares (RateBucketRepository.take, in a transaction of its own). */
export type TakeShared = RateBucketRepository['take'];

interface Bucket {
  /** Tokens this process may spend. */
  tokens: number;
  /** When they were counted (memory buckets), or when the last lease was taken (shared buckets). */
  at: number;
  /** Shared buckets: how many tokens the next lease asks for. */
  lease: number;
  /** Shared buckets: no token before this time; requests are refused without asking the database. */
  emptyUntil: number;
  /** Shared buckets: the lease being taken, which concurrent requests wait for. */
  taking?: Promise<void>;
}

export class Limits {
  private readonly buckets = new Map<string, Bucket>();

  /** Without `shared`, this process alone uses the database, and its buckets are its own. */
  private readonly shared?: TakeShared;

  constructor(shared?: TakeShared) {
    this.shared = shared;
  }

  /**
   * Takes `cost` tokens (at most a bucket's worth) from `name`, which allows `perMinute` a minute in bursts of
   * `burst` (a minute's worth unless given): 0 when taken, else how many ms until they are.
   */
  async take(name: string, perMinute: number, cost = 1, burst = perMinute): Promise<number> {
    const now = Date.now();
    const need = Math.min(cost, burst);
    const bucket = this.bucket(name, burst, now);
    if (!this.shared) return this.takeHere(bucket, perMinute, burst, now, need);
    for (;;) {
      if (bucket.tokens >= need) {
        bucket.tokens -= need;
        return 0;
      }
      if (bucket.emptyUntil > Date.now()) return bucket.emptyUntil - Date.now();
      bucket.taking ??= this.lease(name, bucket, perMinute, burst, need - bucket.tokens).finally(() => {
        bucket.taking = undefined;
      });
      await bucket.taking;
    }
  }

  private bucket(name: string, burst: number, now: number): Bucket {
    let bucket = this.buckets.get(name);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value as string);
      bucket = { tokens: this.shared ? 0 : burst, at: now, lease: 1, emptyUntil: 0 };
      this.buckets.set(name, bucket);
    }
    return bucket;
  }

  private takeHere(bucket: Bucket, perMinute: number, burst: number, now: number, need: number): number {
    const perMs = perMinute / 60_000;
    bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    if (bucket.tokens >= need) {
      bucket.tokens -= need;
      return 0;
    }
    return Math.ceil((need - bucket.tokens) / perMs);
  }

  /**
   * Leases tokens from the shared bucket, at least `short` of them; a lease spent quickly makes the next one larger,
   * a slow one smaller.
   */
  private async lease(name: string, bucket: Bucket, perMinute: number, burst: number, short: number): Promise<void> {
    const now = Date.now();
    const largest = Math.max(1, Math.ceil(Math.min(perMinute / 60, burst)));
    bucket.lease = now - bucket.at < 1000 ? Math.min(largest, bucket.lease * 2) : Math.max(1, Math.floor(bucket.lease / 2));
    bucket.at = now;
    const perMs = perMinute / 60_000;
    const want = Math.max(bucket.lease, Math.ceil(short));
    const taken = await (this.shared as TakeShared)(name, want, burst, perMs);
    bucket.tokens += taken.granted;
    if (taken.granted === 0) bucket.emptyUntil = Date.now() + Math.ceil((short - taken.tokens) / perMs);
  }
}
