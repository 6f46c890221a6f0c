import { type Kysely, sql } from 'kysely';
import { Scope, within, withTimeLimit } from './scope.ts';

// SQLite's group commit: transactions asked for together share one commit.

/**
 * Group commit for a database with one writer and a costly commit (SQLite with `synchronous = FULL`: an fsync per
 * commit). Transactions asked for in the same turn of the event loop run one after another inside one database
 * transaction, each in its own savepoint, and are committed together with one fsync. Nothing is acknowledged before
 * that commit: each caller's promise settles only once the group's COMMIT has returned, and if it fails every
 * transaction of the group fails with it (none was acknowledged, so none is lost). A transaction that throws rolls
 * back to its savepoint and fails alone; the others still commit.
 *
 * The result is the same as running them one by one: they run in order, on one connection, and nothing else uses
 * that connection until the group ends. Each runs in a scope of its own (scope.ts), and may hold the connection
 * for at most `limitMs`: past that it fails as unavailable, its savepoint is rolled back and its scope closed, so
 * one stuck transaction can't hold every writer behind it.
 */
export class GroupCommit<DB> {
  /** How many transactions each commit carried, for /metrics. */
  readonly sizes = new GroupSizes();
  private queue: Pending<DB>[] = [];
  private scheduled = false;

  private readonly db: Kysely<DB>;
  /** The root store whose transactions these are: their scopes name it. */
  private readonly owner: object;
  private readonly limitMs: number;
  private readonly maxGroup;

  constructor(
    db: Kysely<DB>,

    owner: object,
    limitMs: number,
    maxGroup = 64,
  ) {
    this.db = db;
    this.owner = owner;
    this.limitMs = limitMs;
    this.maxGroup = maxGroup;
  }

  run<T>(work: (connection: Kysely<DB>, scope: Scope) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      // Wait for the rest of this turn's requests to ask too: they then share the commit.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue.splice(0, this.maxGroup);
      await this.commit(group);
    }
    this.scheduled = false;
  }

  private async commit(group: Pending<DB>[]): Promise<void> {
    const outcomes: Outcome[] = [];
    try {
      await this.db.connection().execute(async (connection) => {
        await sql`begin immediate`.execute(connection);
        try {
          for (const pending of group) {
            await sql`savepoint grouped`.execute(connection);
            const scope = new Scope(this.owner);
            try {
              const work = within(scope, () => pending.work(connection, scope));
              outcomes.push({ ok: true, value: await withTimeLimit(work, this.limitMs, () => scope.close()) });
              await sql`release grouped`.execute(connection);
            } catch (error) {
              outcomes.push({ ok: false, error });
              await sql`rollback to grouped`.execute(connection);
              await sql`release grouped`.execute(connection);
            } finally {
              scope.close();
            }
          }
          await sql`commit`.execute(connection);
          this.sizes.observe(group.length);
        } catch (error) {
          await sql`rollback`.execute(connection).catch(() => {});
          throw error;
        }
      });
    } catch (error) {
      // The group did not commit: nothing in it happened, whatever each part returned.
      for (const pending of group) pending.reject(error);
      return;
    }
    group.forEach((pending, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }
}

/** Counts of group sizes in cumulative buckets (the shape of a Prometheus histogram), without a metrics library. */
export class GroupSizes {
  static readonly BOUNDS = [1, 2, 4, 8, 16, 32, 64] as const;
  readonly bounds = GroupSizes.BOUNDS;
  /** Commits of at most `BOUNDS[i]` transactions. */
  readonly atMost: number[] = GroupSizes.BOUNDS.map(() => 0);
  commits = 0;
  transactions = 0;

  observe(size: number): void {
    this.commits++;
    this.transactions += size;
    GroupSizes.BOUNDS.forEach((bound, i) => {
      if (size <= bound) this.atMost[i] = (this.atMost[i] ?? 0) + 1;
    });
  }
}

interface Pending<DB> {
  work: (connection: Kysely<DB>, scope: Scope) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
