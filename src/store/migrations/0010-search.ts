import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// Search and paging that scale (issue #19): the popular order's indexes, and an index made for `q` (a substring of
// the lowercased name and image in `search`): a pg_trgm GIN index on PostgreSQL, an FTS5 trigram table kept by
// triggers on SQLite. Neither is exported: the importing database builds it as the rows arrive.

/** The extension lives in `public`, one per database, shared by every schema (the tests give each its own). */
const PG_TRGM_LOCK = 0x70677472; // 'pgtr'

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  // The public and platform scopes in the popular order: most runtime first, then newest.
  await db.schema.createIndex('templates_public_popular').on('templates').columns(['is_public', 'runtime_in_min', 'seq']).execute();
  await db.schema.createIndex('templates_platform_popular').on('templates').columns(['is_platform', 'runtime_in_min', 'seq']).execute();

  if (dialect.name === 'postgres') {
    // Several processes may migrate at once (each test its own schema, one database): they take turns creating it.
    await sql`select pg_advisory_xact_lock(${PG_TRGM_LOCK})`.execute(db);
    await sql`create extension if not exists pg_trgm with schema public`.execute(db);
    await sql`create index templates_search_trgm on templates using gin (search public.gin_trgm_ops)`.execute(db);
  } else {
    await sql`create virtual table templates_search using fts5(search, content='templates', content_rowid='seq', tokenize='trigram')`.execute(
      db,
    );
    await sql`insert into templates_search (templates_search) values ('rebuild')`.execute(db);
    await sql`create trigger templates_search_insert after insert on templates begin
      insert into templates_search (rowid, search) values (new.seq, new.search); end`.execute(db);
    await sql`create trigger templates_search_delete after delete on templates begin
      insert into templates_search (templates_search, rowid, search) values ('delete', old.seq, old.search); end`.execute(db);
    await sql`create trigger templates_search_update after update of search on templates begin
      insert into templates_search (templates_search, rowid, search) values ('delete', old.seq, old.search);
      insert into templates_search (rowid, search) values (new.seq, new.search); end`.execute(db);
  }
}
