import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// `q` searches `search`, the lowercased name and image (store/templates.ts `toRow`), which the store writes with
// every change of either. An update made around the store (an operator's `update templates set image_name = …`, an
// older process) left it as it was: `q` then found the template by its old name and image, and not by its new ones.
// Now an update that changes the name or image without writing `search` in the same statement makes it again, as
// migration 0004 does for the representation. SQL's `lower()` folds fewer letters than JavaScript's (SQLite's only
// A-Z), so such a row's non-ASCII capitals stay until the store rewrites it: its next update, or the next start
// (`migrate` rebuilds what 0004 cleared, and `search` with it).

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name === 'postgres') {
    await sql
      .raw(`create function templates_search_follows_columns() returns trigger language plpgsql as $$
begin
  if new.search is not distinct from old.search and (new.name, new.image_name) is distinct from (old.name, old.image_name) then
    new.search := lower(new.name || E'\\n' || new.image_name);
  end if;
  return new;
end $$`)
      .execute(db);
    await sql
      .raw(`create trigger templates_search_follows_columns before update on templates
for each row execute function templates_search_follows_columns()`)
      .execute(db);
    return;
  }
  await sql
    .raw(`create trigger templates_search_follows_columns after update of name, image_name on templates
for each row when new.search is old.search and (new.name is not old.name or new.image_name is not old.image_name)
begin
  update templates set search = lower(new.name || char(10) || new.image_name) where seq = new.seq;
end`)
    .execute(db);
}
