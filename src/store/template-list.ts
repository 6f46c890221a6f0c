import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { Visibility } from '../domain/visibility.ts';
import { SIZED, withinBudget } from './core.ts';
import type { Tables } from './schema.ts';

// A page of templates: the visibility rule of domain/visibility.ts as SQL, read down the indexes made for it.

export interface TemplateQuery {
  visibility: Visibility;
  category?: string;
  isServerless?: boolean;
  /** Lowercased substring of name or image. */
  search?: string;
  limit: number;
  /** Only templates older than this position (a cursor from the page before). */
  before?: number;
}

type Condition = (eb: ExpressionBuilder<Tables, 'templates'>) => Expression<SqlBool>[];

/** Rows of one visibility scope, and the leading column of the index (that column, then `seq`) they are read down. */
interface Scope {
  where: Condition;
  index: 'owner_id' | 'is_platform' | 'is_public';
}

/**
 * The visibility rule of domain/visibility.ts `isVisible`, as SQL: disjoint scopes, each read down its own index.
 * Each index's leading column is bounded by a range (`>= x and <= x`), not `= x`, and is ordered on: with an
 * equality, PostgreSQL drops the column from the order and may walk the whole table backwards by `seq` instead,
 * filtering. It does when an account holds a few percent of all templates, but none of the newest: a page then
 * read every newer template before reaching the account's own (at 100,000 templates: 22 ms a page, not 0.2 ms).
 */
function visibleScopes(v: Visibility): Scope[] {
  const unbound: Condition = (eb) => (v.bound ? [] : [eb('endpoint_id', 'is', null)]);
  const scopes: Scope[] = [
    { index: 'owner_id', where: (eb) => [eb('owner_id', '>=', v.ownerId), eb('owner_id', '<=', v.ownerId), ...unbound(eb)] },
  ];
  // Private official templates are the platform's alone. `<> 0`, which no index serves: SQLite, without statistics,
  // would read `is_public = 1` down the public index and sort, instead of down the platform index.
  const platformPublic: Condition = (eb) => (v.platformKey ? [] : [eb('is_public', '<>', 0)]);
  if (v.platform)
    scopes.push({
      index: 'is_platform',
      where: (eb) => [eb('is_platform', '>=', 1), eb('owner_id', '<>', v.ownerId), ...platformPublic(eb), ...unbound(eb)],
    });
  if (v.public)
    scopes.push({
      index: 'is_public',
      // `<> 1`, not `= 0`, so that no index serves it: without statistics SQLite takes `is_platform = 0` for a rare
      // value and reads down the platform index, sorting every community template (0 pages/s at 1,000,000).
      where: (eb) => [eb('is_public', '>=', 1), eb('is_platform', '<>', 1), eb('owner_id', '<>', v.ownerId), ...unbound(eb)],
    });
  return scopes;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The bytes a template's representation takes; for one not built yet (see migration 0004), an estimate from its columns. */
const SIZE = sql<number>`coalesce(octet_length(body), 2 * (octet_length(name) + octet_length(image_name) + octet_length(readme)
  + octet_length(env) + octet_length(ports) + octet_length(docker_entrypoint) + octet_length(docker_start_cmd)) + 1024)`;

/**
 * One page and one row more, within `budget` bytes: each visibility scope read down its own index in `seq` order,
 * the pages merged (an OR of the scopes in one query would make the database sort every visible template to find
 * the first hundred), cut where the representations' sizes pass the budget, and only then joined to them.
 */
export function listQuery(db: Kysely<Tables>, query: TemplateQuery, budget: number) {
  const take = query.limit + 1;
  const branches = visibleScopes(query.visibility).map((scope) => {
    let select = db
      .selectFrom('templates')
      .select(['seq', SIZE.as('size')])
      .where((eb) => eb.and(scope.where(eb)));
    if (query.category !== undefined) select = select.where('category', '=', query.category);
    if (query.isServerless !== undefined) select = select.where('is_serverless', '=', query.isServerless ? 1 : 0);
    if (query.search) select = select.where(sql<SqlBool>`search like ${`%${escapeLike(query.search)}%`} escape '\\'`);
    if (query.before !== undefined) select = select.where('seq', '<', query.before);
    return select.orderBy(scope.index, 'desc').orderBy('seq', 'desc').limit(take);
  });
  // The caller's own scope is always there.
  const [first, ...rest] = branches.map((branch, i) => db.selectFrom(branch.as(`scope${i}`)).selectAll());
  const merged = rest.reduce((all, branch) => all.unionAll(branch), first as NonNullable<typeof first>);
  return db
    .with('candidates', (qb) => qb.selectFrom(merged.as('visible')).select(['seq as position', 'size']).orderBy('seq', 'desc').limit(take))
    .with('sized', (qb) => qb.selectFrom('candidates').select(SIZED))
    .selectFrom('sized')
    .innerJoin('templates', 'templates.seq', 'sized.position')
    .select(['templates.seq', 'templates.id', 'templates.owner_id', 'templates.body', 'sized.fetched'])
    .where(withinBudget(budget))
    .orderBy('templates.seq', 'desc');
}
