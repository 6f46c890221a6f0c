import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { ListPosition, ListScope, ListSort } from '../../domain/page.ts';
import { CATEGORIES } from '../../domain/template.ts';
import type { Visibility } from '../../domain/visibility.ts';
import type { Tables } from '../schema.ts';

// A page of templates: the visibility rule of domain/visibility.ts as SQL, read down the indexes made for it.

export interface TemplateQuery {
  visibility: Visibility;
  /** One scope only (docs/api.md, "Scopes"); all the visible ones when absent. */
  scope?: ListScope;
  /** `newest` (the default) or, for the public and platform scopes, `popular` (most runtime first). */
  sort?: ListSort;
  category?: string;
  isServerless?: boolean;
  /** Lowercased substring of name or image. */
  search?: string;
  limit: number;
  /** Only templates after this position in the page's order (a cursor from the page before). */
  before?: ListPosition;
}

/**
 * How `search` is found, chosen per term by the store (see templates.ts `searchPlan`): `like` lets PostgreSQL's
 * planner choose between its trigram index and the scope's index; `trigram` reads SQLite's FTS5 trigram table
 * (a rare term); `walk` reads down the scope's index, checking each row, within `floors`.
 */
export type SearchVia = 'like' | 'trigram' | 'walk';

export interface SearchPlan {
  via: SearchVia;
  /** For each scope (by its index in the query's scopes), the last row a walk may read: the row budget's end. */
  floors?: (ListPosition | undefined)[];
  /**
   * SQLite, without `q`: each walk reads at most this many rows of its index, whatever the rest of the scope's rule
   * throws away; a walk that read them all and came back short ends the page where it stopped (`walkEndsQuery`).
   */
  walkRows?: number;
  /** SQLite, `trigram`: a trigram of the term that fewer than RARE rows hold, whose rows are checked (see `rareTrigramOf`). */
  trigram?: string;
}

type Condition = (eb: ExpressionBuilder<Tables, 'templates'>) => Expression<SqlBool>[];

/**
 * Rows of one visibility scope (`lead` equal to `value`, and `where`), and the index they are read down: `lead`,
 * then `seq` (or `runtime_in_min`, `seq` when sorted by popularity).
 */
interface Scope {
  where: Condition;
  lead: 'owner_id' | 'is_platform' | 'is_public';
  value: string | number;
}

/**
 * The visibility rule of domain/visibility.ts `isVisible`, as SQL: disjoint scopes, each read down its own index.
 * On PostgreSQL, each index's leading column is bounded by a range (see `startsOf`), not `= x`, and is ordered on: with an
 * equality, PostgreSQL drops the column from the order and may walk the whole table backwards by `seq` instead,
 * filtering. It does when an account holds a few percent of all templates, but none of the newest: a page then
 * read every newer template before reaching the account's own (at 100,000 templates: 22 ms a page, not 0.2 ms).
 *
 * With `only`, the one scope asked for, whole: `platform` is every official template the caller may see (the
 * caller's own too, for a platform key), `public` every public community template (the caller's own too), so that
 * a tab showing either is the same complete catalogue for everyone.
 */
function visibleScopes(v: Visibility, only: ListScope | undefined): Scope[] {
  const unbound: Condition = (eb) => (v.bound ? [] : [eb('endpoint_id', 'is', null)]);
  const notOwn: Condition = (eb) => (only ? [] : [eb('owner_id', '<>', v.ownerId)]);
  const scopes: Scope[] = [];
  if (only === undefined || only === 'own')
    scopes.push({
      lead: 'owner_id',
      value: v.ownerId,
      where: unbound,
    });
  // Private official templates are the platform's alone. `<> 0`, which no index serves: SQLite, without statistics,
  // would read `is_public = 1` down the public index and sort, instead of down the platform index.
  const platformPublic: Condition = (eb) => (v.platformKey ? [] : [eb('is_public', '<>', 0)]);
  if (only === 'platform' || (only === undefined && v.platform))
    scopes.push({
      lead: 'is_platform',
      value: 1,
      where: (eb) => [...notOwn(eb), ...platformPublic(eb), ...unbound(eb)],
    });
  if (only === 'public' || (only === undefined && v.public))
    scopes.push({
      lead: 'is_public',
      value: 1,
      // `<> 1`, not `= 0`, so that no index serves it: without statistics SQLite takes `is_platform = 0` for a rare
      // value and reads down the platform index, sorting every community template (0 pages/s at 1,000,000).
      where: (eb) => [eb('is_platform', '<>', 1), ...notOwn(eb), ...unbound(eb)],
    });
  return scopes;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** An FTS5 query for the rows whose text holds `term` (a phrase of its trigrams: a substring). */
export const trigramPhrase = (term: string) => `"${term.replaceAll('"', '""')}"`;

/** A term found in fewer rows than this is read through the trigram table (SQLite). */
const RARE = 1_000;
/** SQLite: how many of a term's trigrams are asked whether they are rare (see `rareTrigramOf`). */
const TRIGRAMS_ASKED = 32;

/**
 * SQLite: one of the term's trigrams that fewer than RARE rows of the trigram table hold, if any. A page then reads
 * that trigram's rows and checks each against the term: at most RARE of them. Asking FTS5 for the rows holding the
 * whole term instead (a phrase of its trigrams) reads every trigram's list of rows, however long: 1.2 ms for
 * `quokkaflux` at 100,000 templates (one list per visibility scope), where its rare trigram's 10 rows take 0.46 ms in
 * all; and a term made of frequent trigrams that no row holds in that order (`seededed`, each of whose trigrams every
 * `seeded …` row holds) made FTS5 check every row, 0.36 s on the event loop. Each count stops at RARE rows, the first
 * rare trigram ends the look, and at most TRIGRAMS_ASKED of them, spread over the term, are asked (a 255-character
 * term has 253): a term none of whose asked trigrams is rare is walked, within the row budget.
 */
export async function rareTrigramOf(db: Kysely<Tables>, term: string): Promise<string | undefined> {
  const chars = [...term];
  const all = [...new Set(chars.slice(2).map((_, i) => chars.slice(i, i + 3).join('')))];
  const step = Math.max(1, all.length / TRIGRAMS_ASKED);
  const trigrams = new Set(Array.from({ length: Math.min(all.length, TRIGRAMS_ASKED) }, (_, i) => all[Math.floor(i * step)] as string));
  for (const trigram of trigrams) {
    const { rows } = await sql<{ found: number }>`select count(*) as found from (select rowid from templates_search
      where templates_search match ${trigramPhrase(trigram)} limit ${RARE})`.execute(db);
    if (Number(rows[0]?.found ?? 0) < RARE) return trigram;
  }
  return undefined;
}

/** The rows whose `search` holds `term`, found as `via` says; an exact check in every case (the trigram table's too). */
function searchCondition(dialect: 'sqlite' | 'postgres', plan: SearchPlan, term: string) {
  const via = plan.via;
  if (via === 'like') return sql<SqlBool>`search like ${`%${escapeLike(term)}%`} escape '\\'`;
  // `strpos`/`instr`, which no trigram index serves: a walk must not turn into a lossy scan of the whole index.
  const exact = dialect === 'postgres' ? sql<SqlBool>`strpos(search, ${term}) > 0` : sql<SqlBool>`instr(search, ${term}) > 0`;
  if (via === 'walk') return exact;
  const phrase = trigramPhrase(plan.trigram ?? term);
  return sql<SqlBool>`seq in (select rowid from templates_search where templates_search match ${phrase}) and ${exact}`;
}

/**
 * Where a walk of scope `scopeIndex` must stop to stay within `rows` rows of the scope: the last row it may read,
 * and whether more follow it (else the walk reaches the scope's end within the budget). The rows are those of the
 * indexes the page reads (the category and Serverless filters are their leading columns), before any check of a
 * row (`q`, the rest of the scope's rule).
 */
export function walkEndQuery(db: Kysely<Tables>, dialect: 'sqlite' | 'postgres', query: TemplateQuery, scopeIndex: number, rows: number) {
  const popular = query.sort === 'popular';
  const scope = visibleScopes(query.visibility, query.scope)[scopeIndex] as Scope;
  const walks = walksOf(scope, dialect, query, false).map((walk, j) =>
    db
      .selectFrom(
        orderedBy(
          db
            .selectFrom('templates')
            .select(['seq as position', positionRuntime(popular)])
            .where((eb) => eb.and(walk.index(eb))),
          walk.order,
        )
          .limit(rows + 1)
          .as(`walk${j}`),
      )
      .selectAll(),
  );
  const [first, ...rest] = walks;
  const merged = rest.reduce((all, walk) => all.unionAll(walk), first as NonNullable<typeof first>);
  return db
    .selectFrom(merged.as('walked'))
    .select(['position', 'runtime'])
    .orderBy(sql`${orderOf(popular)}`)
    .limit(2)
    .offset(rows - 1);
}

/**
 * A position's runtime, read only in the popular order: the newest-first indexes don't hold it, and without it a
 * walk reads nothing but its index.
 */
const positionRuntime = (popular: boolean) => (popular ? sql<number>`runtime_in_min` : sql<number>`0`).as('runtime');

/** How many scopes a query reads. */
export const scopeCount = (query: TemplateQuery) => visibleScopes(query.visibility, query.scope).length;

/** The bytes a template's representation takes; for one not built yet (see migration 0004), an estimate from its columns. */
const SIZE = sql<number>`coalesce(octet_length(body), 2 * (octet_length(name) + octet_length(image_name) + octet_length(readme)
  + octet_length(env) + octet_length(ports) + octet_length(docker_entrypoint) + octet_length(docker_start_cmd)) + 1024)`;

type Column = 'owner_id' | 'is_platform' | 'is_public' | 'category' | 'is_serverless' | 'runtime_in_min' | 'seq';

/**
 * An index a page reads (migrations 0001, 0010, 0013): its leading columns, each equal to a value, then the page's
 * order (`seq`, or `runtime_in_min`, `seq`). A partial index holds only the rows of its `partial` condition, each
 * column equal to a value (`where is_public = 1 and is_platform = 0`); the first is the leading column's.
 */
interface IndexKey {
  equal: [Column, string | number][];
  partial?: [Column, number][];
}

/**
 * The indexes a scope is read down for the query's filters. Without any, the scope's own (`lead`, then the order);
 * with either, the index of both filters (migration 0013), once for each value of the one not asked for: a page of
 * one category reads its Pod templates and its Serverless ones, and merges them in the page's order.
 */
function keysOf(scope: Scope, query: TemplateQuery): IndexKey[] {
  if (query.category === undefined && query.isServerless === undefined) return [{ equal: [[scope.lead, scope.value]] }];
  const categories: readonly string[] = query.category === undefined ? CATEGORIES : [query.category];
  const serverless = query.isServerless === undefined ? [0, 1] : [query.isServerless ? 1 : 0];
  return categories.flatMap((category) =>
    serverless.map(
      (s): IndexKey => ({
        equal: [
          [scope.lead, scope.value],
          ['category', category],
          ['is_serverless', s],
        ],
        partial: PARTIAL[scope.lead],
      }),
    ),
  );
}

/** The conditions of the partial filter indexes (migration 0013), by the scope's leading column. */
const PARTIAL: Record<Scope['lead'], [Column, number][] | undefined> = {
  owner_id: undefined,
  is_platform: [['is_platform', 1]],
  is_public: [
    ['is_public', 1],
    ['is_platform', 0],
  ],
};

/**
 * One search down an index: the conditions the index serves (its leading columns, its start point), those checked
 * on each row it reads (`residual`: the rest of the scope's rule), and the index's order.
 */
interface Walk {
  index: Condition;
  residual: Condition;
  order: Column[];
}

/** The searches that read a scope's rows for `query`, in the page's order from its cursor: see `startsOf`. */
function walksOf(scope: Scope, dialect: 'sqlite' | 'postgres', query: TemplateQuery, byTrigram: boolean): Walk[] {
  const popular = query.sort === 'popular';
  // Read through the trigram table, no index of the scope is read: the filters are checked on the rows it names.
  const keys: IndexKey[] = byTrigram ? [{ equal: [[scope.lead, scope.value]] }] : keysOf(scope, query);
  const filters: Condition = (eb) =>
    byTrigram
      ? [
          ...(query.category === undefined ? [] : [eb('category', '=', query.category)]),
          ...(query.isServerless === undefined ? [] : [eb('is_serverless', '=', query.isServerless ? 1 : 0)]),
        ]
      : [];
  return keys.flatMap((key) =>
    startsOf(key, dialect, popular, query.before, byTrigram).map((start) => ({
      index: start,
      residual: (eb: ExpressionBuilder<Tables, 'templates'>) => [...scope.where(eb), ...filters(eb)],
      order: [...key.equal.map(([column]) => column), ...(popular ? (['runtime_in_min'] as const) : []), 'seq'],
    })),
  );
}

/** `select` ordered by `columns`, each descending. */
function orderedBy<S extends { orderBy(column: Column, direction: 'desc'): S }>(select: S, columns: Column[]): S {
  return columns.reduce((ordered, column) => ordered.orderBy(column, 'desc'), select);
}

/**
 * Where a walk down an index starts: the index's start point, so that page 50 costs what page 1 does.
 * PostgreSQL takes the cursor as a row value over the index's columns (`(is_public, seq) < (1, $cursor)`) beside
 * each leading column's lower bound (with an equality it may drop the column, see `visibleScopes`), and the query
 * orders on every column of the index, so that no other index gives its order. SQLite never bounds a search by
 * `seq` (the rowid) inside a row value, so there the leading columns are equalities and `seq` a bound of its own; in
 * the popular order, the rest of the cursor's runtime and the lower runtimes are two searches. A partial index's
 * condition is written as a literal (`is_public = 1`), which both databases need to see that the index serves it.
 */
function startsOf(
  key: IndexKey,
  dialect: 'sqlite' | 'postgres',
  popular: boolean,
  at: ListPosition | undefined,
  byTrigram = false,
): Condition[] {
  const partial: Condition = (eb) => (key.partial ?? []).map(([column, value]) => eb(column, '=', sql.lit(value)));
  if (dialect === 'sqlite') {
    // Read through the trigram table, no index may be chosen: `+column` is SQLite's way to say so.
    const scoped: Condition = (eb) => [
      ...partial(eb),
      ...key.equal
        .slice(key.partial ? 1 : 0)
        .map(([column, value]) => (byTrigram ? sql<SqlBool>`+${sql.ref(column)} = ${value}` : eb(column, '=', value))),
    ];
    if (at === undefined) return [scoped];
    if (!popular) return [(eb) => [...scoped(eb), eb('seq', '<', at.seq)]];
    const runtime = at.runtime ?? 0;
    return [
      (eb) => [...scoped(eb), eb('runtime_in_min', '=', runtime), eb('seq', '<', at.seq)],
      (eb) => [...scoped(eb), eb('runtime_in_min', '<', runtime)],
    ];
  }
  // Both ends are row values over the index's columns: the first page starts past the largest runtime and seq, a deep
  // one at its cursor, and every page ends below the smallest. With a bound of each column on its own, PostgreSQL 15
  // started a first page's backward scan at the index's end, stepping over every other category's entries (620
  // buffers for 20 rows at 300,000 templates, 4 this way).
  const row = sql.join([...key.equal.map(([column]) => column), ...(popular ? ['runtime_in_min'] : []), 'seq'].map((c) => sql.ref(c)));
  const equal = key.equal.map(([, value]) => value);
  const bound = (...last: unknown[]) => sql.join([...equal, ...(popular ? last : last.slice(1))]);
  const end = sql<SqlBool>`(${row}) >= (${bound(FIRST, FIRST)})`;
  const start =
    at === undefined ? sql<SqlBool>`(${row}) <= (${bound(LAST, LAST)})` : sql<SqlBool>`(${row}) < (${bound(at.runtime ?? 0, at.seq)})`;
  return [(eb) => [...partial(eb), end, start]];
}

/** Past every runtime and seq (both bigint on PostgreSQL): where a first page starts, and where every page ends. */
const LAST = sql.lit('9223372036854775807');
const FIRST = sql.lit('-9223372036854775808');

/** The page's order, as `order by` text over a row's `runtime` and `position` (its seq). */
const orderOf = (popular: boolean) => sql.raw(popular ? 'runtime desc, position desc' : 'position desc');

/**
 * A walk within its row budget (SQLite): its first `rows` rows down the index, in the page's order, then the rest of
 * the scope's rule checked on them. The inner order is the outer's, so SQLite reads the rows as they come, no sort.
 */
function budgeted(db: Kysely<Tables>, walk: Walk, popular: boolean, rows: number, take: number) {
  const inner = db
    .selectFrom('templates')
    .select(['seq as position', 'runtime_in_min as runtime', SIZE.as('size'), 'owner_id', 'endpoint_id', 'is_public', 'is_platform'])
    .where((eb) => eb.and(walk.index(eb)));
  const walked = (popular ? inner.orderBy('runtime_in_min', 'desc') : inner).orderBy('seq', 'desc').limit(rows);
  // The scope's rule reads the columns the walk passes on, by the same names.
  const kept = db
    .selectFrom(walked.as('walked'))
    .select(['position', 'runtime', 'size'])
    .where((eb) => eb.and(walk.residual(eb as unknown as ExpressionBuilder<Tables, 'templates'>)));
  return (popular ? kept.orderBy('runtime', 'desc') : kept).orderBy('position', 'desc').limit(take);
}

/** The number of walks a page of `query` reads (each scope's, see `walksOf`). */
export const walkCount = (dialect: 'sqlite' | 'postgres', query: TemplateQuery) =>
  visibleScopes(query.visibility, query.scope).reduce((n, scope) => n + walksOf(scope, dialect, query, false).length, 0);

/**
 * SQLite: where each of the walks `walks` stopped, if it read its whole budget of `rows` index rows at or above
 * `last` (the page's last row; the whole walk when absent). Each part is a range of the walk's index, so a check
 * reads at most `rows` rows: in the popular order, the runtimes above the last row's, then the rest of its runtime.
 */
export function walkEndsQuery(db: Kysely<Tables>, query: TemplateQuery, walks: number[], last: ListPosition | undefined, rows: number) {
  const popular = query.sort === 'popular';
  const all = visibleScopes(query.visibility, query.scope).flatMap((scope) => walksOf(scope, 'sqlite', query, false));
  const ends = walks.map((k) => {
    const walk = all[k] as Walk;
    const above: Condition[] =
      last === undefined
        ? [() => []]
        : popular
          ? [
              (eb) => [eb('runtime_in_min', '>', last.runtime ?? 0)],
              (eb) => [eb('runtime_in_min', '=', last.runtime ?? 0), eb('seq', '>=', last.seq)],
            ]
          : [(eb) => [eb('seq', '>=', last.seq)]];
    const parts = above.map((part) => {
      const select = db
        .selectFrom('templates')
        .select(['seq as position', positionRuntime(popular)])
        .where((eb) => eb.and([...walk.index(eb), ...part(eb)]));
      return (popular ? select.orderBy('runtime_in_min', 'desc') : select).orderBy('seq', 'desc');
    });
    const id = sql.lit(k).as('walk');
    // Newest first, one range: its row at the budget's end, straight from the index.
    if (parts.length === 1)
      return db
        .selectFrom(
          (parts[0] as NonNullable<(typeof parts)[0]>)
            .limit(1)
            .offset(rows - 1)
            .as(`end${k}`),
        )
        .selectAll()
        .select(id);
    const [first, ...rest] = parts.map((part, p) => db.selectFrom(part.limit(rows).as(`part${p}`)).selectAll());
    const read = rest.reduce((both, part) => both.unionAll(part), first as NonNullable<typeof first>);
    return db
      .selectFrom(
        db
          .selectFrom(read.as('read'))
          .select(['position', 'runtime'])
          .orderBy(sql`${orderOf(popular)}`)
          .limit(1)
          .offset(rows - 1)
          .as(`end${k}`),
      )
      .selectAll()
      .select(id);
  });
  const [first, ...rest] = ends;
  return rest.reduce((all, end) => all.unionAll(end), first as NonNullable<typeof first>);
}

/**
 * One page and one row more, within `budget` bytes: each visibility scope read down its own index in the page's
 * order, starting at the cursor (a row value over the index's columns, so the index's start point, not a filter),
 * the pages merged (an OR of the scopes in one query would make the database sort every visible template to find
 * the first hundred), cut where the representations' sizes pass the budget, and only then joined to them and to
 * their owners' names.
 */
export function listQuery(
  db: Kysely<Tables>,
  dialect: 'sqlite' | 'postgres',
  query: TemplateQuery,
  budget: number,
  plan: SearchPlan = { via: 'like' },
) {
  const take = query.limit + 1;
  const popular = query.sort === 'popular';
  const term = query.search;
  let k = 0;
  const branches = visibleScopes(query.visibility, query.scope).flatMap((scope, i) =>
    walksOf(scope, dialect, query, term !== undefined && plan.via === 'trigram').map((walk, j) => {
      const alias = j === 0 ? `scope${i}` : `scope${i}_${j}`;
      // Which walk each row came from, and how many the walk gave (see `walkEndsQuery`).
      const counted = [sql.lit(k++).as('walk'), sql<number>`count(*) over ()`.as('kept')];
      if (plan.walkRows !== undefined)
        return db
          .selectFrom(budgeted(db, walk, popular, plan.walkRows, take).as(alias))
          .selectAll()
          .select(counted);
      let select = db
        .selectFrom('templates')
        .select(['seq as position', 'runtime_in_min as runtime', SIZE.as('size')])
        .where((eb) => eb.and([...walk.residual(eb), ...walk.index(eb)]));
      if (term) select = select.where(searchCondition(dialect, plan, term));
      const floor = plan.floors?.[i];
      if (floor !== undefined)
        select = popular
          ? select.where((eb) => eb(eb.refTuple('runtime_in_min', 'seq'), '>=', eb.tuple(floor.runtime ?? 0, floor.seq)))
          : select.where('seq', '>=', floor.seq);
      const branch = orderedBy(select, walk.order).limit(take);
      return db.selectFrom(branch.as(alias)).selectAll().select(counted);
    }),
  );
  const [first, ...rest] = branches;
  const merged = rest.reduce((all, branch) => all.unionAll(branch), first as NonNullable<typeof first>);
  const order = orderOf(popular);
  return db
    .with('candidates', (qb) =>
      qb.selectFrom(merged.as('visible')).select(['position', 'runtime', 'size', 'walk', 'kept']).orderBy(sql`${order}`).limit(take),
    )
    .with('sized', (qb) =>
      qb
        .selectFrom('candidates')
        .select([
          'position',
          'runtime',
          'walk',
          'kept',
          sql<number>`sum(size) over (order by ${order} rows between unbounded preceding and current row)`.as('running'),
          sql<number>`row_number() over (order by ${order})`.as('rank'),
          sql<number>`count(*) over ()`.as('fetched'),
        ]),
    )
    .selectFrom('sized')
    .innerJoin('templates', 'templates.seq', 'sized.position')
    .innerJoin('accounts', 'accounts.id', 'templates.owner_id')
    .select([
      'templates.seq',
      'sized.runtime',
      'templates.id',
      'templates.owner_id',
      'templates.container_registry_auth_id',
      'accounts.name as owner_name',
      'templates.body',
      'sized.fetched',
      'sized.walk',
      'sized.kept',
    ])
    .where(sql<boolean>`(sized.rank = 1 or sized.running <= ${budget})`)
    .orderBy('sized.rank');
}
