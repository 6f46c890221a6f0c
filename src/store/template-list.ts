import { type Expression, type ExpressionBuilder, type Kysely, type SqlBool, sql } from 'kysely';
import type { Visibility } from '../domain/visibility.ts';
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
  if (v.platform)
    scopes.push({ index: 'is_platform', where: (eb) => [eb('is_platform', '>=', 1), eb('owner_id', '<>', v.ownerId), ...unbound(eb)] });
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

/**
 * One page and one row more: each visibility scope read down its own index in `seq` order, and the pages merged.
 * An OR of the scopes in one query would make the database sort every visible template to find the first hundred.
 */
export function listQuery(db: Kysely<Tables>, query: TemplateQuery) {
  const take = query.limit + 1;
  const branches = visibleScopes(query.visibility).map((scope) => {
    let select = db
      .selectFrom('templates')
      .select(['seq', 'id', 'owner_id', 'body'])
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
  return db.selectFrom(merged.as('visible')).selectAll().orderBy('seq', 'desc').limit(take);
}
