import { type Kysely, sql } from 'kysely';

// The list's filters (issue #19, item 4): `category` and `isServerless` are read down indexes whose leading columns
// are those equalities and whose order is the page's, so that a page of a sparse filter reads about a page of rows,
// the first page and the fiftieth alike (store/template-list.ts, `indexOf`). One index per scope and order, both
// filters in it: a page with one filter only reads it once per value of the other (`is_serverless` 0 and 1, or each
// category) and merges them. The public and official ones are partial, each holding its scope's rows only: a
// private community template, the most common kind, costs its insert nothing in them, and a page of community
// templates never reads past official ones. They keep the flag as their leading column all the same: SQLite, which
// has no statistics, counts the columns an index matches by equality, and with the flag's it prefers these to the
// scope's own index (`is_public`, `seq`), which would read the filter's rows among all others.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('templates_owner_filters')
    .on('templates')
    .columns(['owner_id', 'category', 'is_serverless', 'seq'])
    .execute();
  await sql`create index templates_public_filters on templates (is_public, category, is_serverless, seq)
    where is_public = 1 and is_platform = 0`.execute(db);
  await sql`create index templates_platform_filters on templates (is_platform, category, is_serverless, seq)
    where is_platform = 1`.execute(db);
  await sql`create index templates_public_popular_filters on templates (is_public, category, is_serverless, runtime_in_min, seq)
    where is_public = 1 and is_platform = 0`.execute(db);
  await sql`create index templates_platform_popular_filters on templates (is_platform, category, is_serverless, runtime_in_min, seq)
    where is_platform = 1`.execute(db);
}
