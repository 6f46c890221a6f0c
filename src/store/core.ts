import { type Compilable, type CompiledQuery, type Insertable, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Page } from '../domain/page.ts';
import type { SqlDialect } from './dialect.ts';
import type { ReadCache } from './read-cache.ts';
import type { Tables } from './schema.ts';
import { assertOpen, assertOutside, type Scope, TransactionMisuse } from './scope.ts';

/** Queries compiled once per dialect (compiling costs more than a lookup by key), by name. */
const compiledQueries = new Map<string, CompiledQuery>();

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
  /** A transaction's changes (as migration 0008 names them), told to the read cache once it has committed. */
  private readonly written?: string[];

  constructor(
    kysely: Kysely<Tables>,
    dialect: SqlDialect,

    owner: object,

    scope?: Scope,

    cache?: ReadCache,

    written?: string[],
  ) {
    this.kysely = kysely;
    this.dialect = dialect;
    this.owner = owner;
    this.scope = scope;
    this.cache = cache;
    this.written = written;
  }

  /**
   * This process changed what `change` names (`t:<template id>`, `k:<key digest>`): its read cache forgets it at once
   * outside a transaction, after the commit inside one, so that the writer reads its own write at once. Other
   * processes hear of it from the database.
   */
  wrote(change: string): void {
    if (this.written) this.written.push(change);
    else this.cache?.forget(change);
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

  /** Runs the query `build` makes, compiled once, with `parameters` in the order the query takes them. */
  async precompiled<R>(name: string, build: (db: Kysely<Tables>) => Compilable<R>, parameters: unknown[]): Promise<R[]> {
    const db = this.db;
    const key = `${this.dialect.name}:${name}`;
    let compiled = compiledQueries.get(key);
    if (!compiled) {
      compiled = build(db).compile();
      compiledQueries.set(key, compiled);
    }
    this.dialect.prepare?.(compiled.sql);
    // Outside a transaction, SQLite answers a read at once (see `SqlDialect.readNow`).
    const rows = this.scope ? undefined : this.dialect.readNow?.(compiled.sql, parameters);
    if (rows) return rows as R[];
    const result = await db.executeQuery<R>({ ...compiled, parameters } as CompiledQuery<R>);
    return result.rows;
  }

  /** Inserts `row` into `table` with a statement compiled once per name: every row given under a name has the same columns. */
  async insertRow<T extends keyof Tables>(name: string, table: T, row: Insertable<Tables[T]>): Promise<void> {
    const values = Object.values(row);
    await this.precompiled(
      name,
      (db) => {
        const query = db.insertInto(table).values(row);
        if (query.compile().parameters.length !== values.length) throw new Error(`${name}: every column must be a parameter`);
        return query;
      },
      values,
    );
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
