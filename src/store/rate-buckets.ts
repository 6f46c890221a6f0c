import { sql } from 'kysely';
import type { Core } from './core.ts';

// Rate-limit token buckets that every process of an install shares: one aggregate, one repository.

/** What taking tokens from a bucket gave: how many, and what the bucket holds after. */
export interface Taken {
  granted: number;
  /** Tokens left (fractional: the bucket refills continuously). */
  tokens: number;
}

/** What the root store may do with rate buckets: nothing (taking tokens writes). Writes are a transaction's (store.ts). */
export type RateBucketReads = Pick<RateBucketRepository, never>;

/**
 * Token buckets in the database, shared by every process. One statement takes up to `want` tokens from a bucket
 * that holds at most `capacity` and refills `perMs` a millisecond, timed by the database's own clock, so that the
 * processes' clocks never matter. (In an upsert's SET, every column named is the row's value before it.)
 */
export class RateBucketRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  async take(bucket: string, want: number, capacity: number, perMs: number): Promise<Taken> {
    const postgres = this.core.dialect.name === 'postgres';
    const now = postgres ? sql`extract(epoch from statement_timestamp()) * 1000` : sql`unixepoch('subsec') * 1000`;
    const [least, greatest] = postgres ? [sql`least`, sql`greatest`] : [sql`min`, sql`max`];
    const refilled = sql`${least}(${capacity}, b.tokens + ${greatest}(0, ${now} - b.updated_ms) * ${perMs})`;
    const first = Math.min(want, capacity);
    const { rows } = await sql<{ granted: number; tokens: number }>`
      insert into rate_buckets as b (bucket, tokens, updated_ms, granted)
      values (${bucket}, ${capacity - first}, ${now}, ${first})
      on conflict (bucket) do update set
        granted = ${least}(${want}, floor(${refilled})),
        tokens = ${refilled} - ${least}(${want}, floor(${refilled})),
        updated_ms = ${greatest}(b.updated_ms, ${now})
      returning granted, tokens`.execute(this.core.db);
    return { granted: Number(rows[0]?.granted ?? 0), tokens: Number(rows[0]?.tokens ?? 0) };
  }

  /**
   * Forgets buckets untouched for `idleMs`, by the database's clock: a bucket idle for as long as it takes to refill
   * is full again, the same as no bucket at all. Without this, every address that ever failed would keep a row.
   */
  async forgetIdle(idleMs: number): Promise<number> {
    const now =
      this.core.dialect.name === 'postgres' ? sql`extract(epoch from statement_timestamp()) * 1000` : sql`unixepoch('subsec') * 1000`;
    const result = await this.core.db.deleteFrom('rate_buckets').where(sql<boolean>`updated_ms < ${now} - ${idleMs}`).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
