import { type Compilable, type CompiledQuery, type Insertable, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Page } from '../domain/page.ts';
import type { ReadCache } from './cache/read-cache.ts';
import type { SqlDialect } from './dialect.ts';
import type { Tables } from './schema.ts';
import { assertOpen, assertOutside, type Scope, TransactionMisuse } from './transactions/scope.ts';

// The core every repository runs its queries through: the guarded query builder and statements compiled once.

/**
 * A statement compiled once per dialect (compiling costs more than a lookup by key), then run with new parameters.
 * Its SQL is bound to this value where it is made, once, at module level: no name can run another's SQL. `build` is
 * given the parameters of the first run and must make the same SQL whatever they are; a run whose parameters don't
 * match the compiled statement's count fails at once.
 */
export class Statement<R, P extends readonly unknown[]> {
  private readonly compiled = new Map<SqlDialect['name'], CompiledQuery>();
  private readonly build: (db: Kysely<Tables>, ...parameters: P) => Compilable<R>;

  constructor(build: (db: Kysely<Tables>, ...parameters: P) => Compilable<R>) {
    this.build = build;
  }

  /** @internal The statement for `dialect`, compiled with `parameters` the first time. */
  compiledFor(db: Kysely<Tables>, dialect: SqlDialect['name'], parameters: P): CompiledQuery {
    let compiled = this.compiled.get(dialect);
    if (!compiled) {
      compiled = this.build(db, ...parameters).compile();
      this.compiled.set(dialect, compiled);
    }
    if (compiled.parameters.length !== parameters.length) {
      throw new Error(`a statement compiled with ${compiled.parameters.length} parameters was run with ${parameters.length}`);
    }
    return compiled;
  }
}

/**
 * An insert of whole rows into `table`, compiled once per dialect: every column a parameter, its values taken from
 * each row by column name (never by the order of the row's keys), so every row given must have the same columns.
 */
export class RowInsert<T extends keyof Tables> {
  private readonly statement: Statement<unknown, unknown[]>;
  private columns?: string[];

  constructor(table: T) {
    this.statement = new Statement((db, ...values) => {
      const row = Object.fromEntries((this.columns as string[]).map((column, i) => [column, values[i]]));
      return db.insertInto(table).values(row as Insertable<Tables[T]>);
    });
  }

  /** @internal The statement and the row's values in its columns' order. */
  valuesOf(row: Insertable<Tables[T]>): unknown[] {
    this.columns ??= Object.keys(row);
    const given = Object.keys(row);
    if (given.length !== this.columns.length || given.some((column) => !(this.columns as string[]).includes(column))) {
      throw new Error(`a row of ${given.join(', ')} given to an insert of ${this.columns.join(', ')}`);
    }
    return this.columns.map((column) => (row as Record<string, unknown>)[column]);
  }

  get prepared(): Statement<unknown, unknown[]> {
    return this.statement;
  }
}

/**
 * What every repository runs its queries through: the query builder of the root store or of one transaction,
 * guarded so that neither is used where it must not be (see scope.ts), and the statements compiled once.
 */
export class Core {
  private readonly kysely: Kysely<Tables>;
  readonly dialect: SqlDialect;
  /** The root store this belongs to: its transactions' scopes name it. */
  private readonly owner: object;
  /** The transaction this core runs in; none for the root store. */
  private readonly scope?: Scope;
  /** The root store's read cache, which its lookups go through; none in a transaction, which reads the database. */
  readonly cache?: ReadCache;

  constructor(
    kysely: Kysely<Tables>,
    dialect: SqlDialect,

    owner: object,

    scope?: Scope,

    cache?: ReadCache,
  ) {
    this.kysely = kysely;
    this.dialect = dialect;
    this.owner = owner;
    this.scope = scope;
    this.cache = cache;
  }

  /** The query builder, once it is certain that it may be used here. */
  get db(): Kysely<Tables> {
    if (this.scope) assertOpen(this.scope);
    else assertOutside(this.owner, 'The root store was used');
    return this.kysely;
  }

  get inTransaction(): boolean {
    return this.scope !== undefined;
  }

  /** Row locks (`for update`) are taken on PostgreSQL; SQLite needs none, its one writer holds the whole database. */
  get locksRows(): boolean {
    return this.dialect.name === 'postgres';
  }

  /** For writes of several statements that must land together. */
  requireTransaction(what: string): void {
    if (!this.scope) throw new TransactionMisuse(`${what} must run inside a transaction`);
  }

  /** Runs `statement` (compiled once per dialect) with `parameters`. */
  async run<R, P extends readonly unknown[]>(statement: Statement<R, P>, ...parameters: P): Promise<R[]> {
    const db = this.db;
    const compiled = statement.compiledFor(db, this.dialect.name, parameters);
    this.dialect.prepare?.(compiled.sql);
    // Outside a transaction, SQLite answers a read at once (see `SqlDialect.readNow`).
    const rows = this.scope ? undefined : this.dialect.readNow?.(compiled.sql, parameters);
    if (rows) return rows as R[];
    const result = await db.executeQuery<R>({ ...compiled, parameters } as CompiledQuery<R>);
    return result.rows;
  }

  /** Inserts `row` with `insert`, compiled once per dialect. */
  async insertRow<T extends keyof Tables>(insert: RowInsert<T>, row: Insertable<Tables[T]>): Promise<void> {
    await this.run(insert.prepared, ...insert.valuesOf(row));
  }

  /** Runs `write`; a unique violation becomes `taken()` (a domain error), anything else passes. */
  async unique<T>(write: Promise<T>, taken: () => Error): Promise<T> {
    try {
      return await write;
    } catch (error) {
      throw this.dialect.isUniqueViolation(error) ? taken() : error;
    }
  }
}

/** A page from `limit + 1` rows: the extra row only tells that more follow. */
export function page<Row, T, P = number>(rows: Row[], limit: number, position: (row: Row) => P, map: (row: Row) => T): Page<T, P> {
  const shown = rows.slice(0, limit);
  const last = shown[shown.length - 1];
  return { items: shown.map(map), next: rows.length > limit && last ? position(last) : undefined };
}

/**
 * Pages bounded in bytes. The candidates of a page (at most `limit + 1` rows, newest first) are chosen by their
 * `position` and `size` alone; `sized` numbers them and adds their sizes up, and only the rows that fit in the
 * budget are then joined to their content. So the database never hands over, and the server never holds, more than
 * about one page, however large the rows. One statement: one snapshot.
 */
export const SIZED = [
  'position',
  sql<number>`sum(size) over (order by position desc rows between unbounded preceding and current row)`.as('running'),
  sql<number>`row_number() over (order by position desc)`.as('rank'),
  sql<number>`count(*) over ()`.as('fetched'),
] as const;

/** Keeps the first row, and every row whose running size is within `budget`. */
export const withinBudget = (budget: number): RawBuilder<boolean> => sql<boolean>`(sized.rank = 1 or sized.running <= ${budget})`;

/** A page from the rows that fit (each with how many candidates there were): more follow when some did not fit. */
export function sizedPage<Row extends { fetched: number | string }, T, P = number>(
  rows: Row[],
  limit: number,
  position: (row: Row) => P,
  map: (row: Row) => T,
): Page<T, P> {
  const fetched = Number(rows[0]?.fetched ?? 0);
  if (rows.length === fetched) return page(rows, limit, position, map);
  const last = rows[rows.length - 1];
  return { items: rows.map(map), next: last ? position(last) : undefined };
}
