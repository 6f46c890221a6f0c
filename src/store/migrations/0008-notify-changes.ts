import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// The database tells every process which cached values a write made stale, whoever wrote: the service, another
// process, an operator's psql, a migration (see store/read-cache.ts). A change is named by a short text: `t:<template
// id>`, `k:<key digest>`, `a:<account id>` (every key of the account), or `*` (everything). Inserts name nothing: only
// what was read can be cached, and a cache keeps no misses.
//
// PostgreSQL: triggers NOTIFY on a channel named after the table's schema (`podplate_<md5(schema)>`), so that installs
// in other schemas of one database (the tests') never invalidate each other. SQLite: triggers append to
// `cache_changes`; a process that sees `PRAGMA data_version` move reads the rows after the last one it read.

const SOURCES = [
  { table: 'templates', name: `'t:' || old.id` },
  { table: 'api_keys', name: `'k:' || old.digest` },
  { table: 'accounts', name: `'a:' || old.id` },
];

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name === 'postgres') {
    await sql
      .raw(`create function podplate_notify_flush() returns trigger language plpgsql as $$
begin
  perform pg_notify('podplate_' || md5(tg_table_schema), '*');
  return null;
end $$`)
      .execute(db);
    for (const { table, name } of SOURCES) {
      await sql
        .raw(`create function ${table}_notify_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('podplate_' || md5(tg_table_schema), ${name});
  return null;
end $$`)
        .execute(db);
      await sql
        .raw(`create trigger ${table}_notify_change after update or delete on ${table}
for each row execute function ${table}_notify_change()`)
        .execute(db);
      await sql
        .raw(
          `create trigger ${table}_notify_truncate after truncate on ${table} for each statement execute function podplate_notify_flush()`,
        )
        .execute(db);
    }
    return;
  }
  await sql.raw('create table cache_changes (seq integer primary key autoincrement, name text not null)').execute(db);
  for (const { table, name } of SOURCES) {
    for (const event of ['update', 'delete']) {
      await sql
        .raw(`create trigger ${table}_${event}_change after ${event} on ${table}
for each row begin insert into cache_changes (name) values (${name}); end`)
        .execute(db);
    }
  }
}
