import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// A page filtered by category or Serverless reads one index range per value (store/template-list.ts), and the
// public and official scopes partial indexes of `is_public = 1` and `is_platform = 1`: a row holding another value
// (a category no template has, a flag of 2), which only SQL written around the store could give it, would be missed
// by those pages while GET still served it. The database now refuses such values from any writer, as the API does.
// Rows written before are not checked again (PostgreSQL's constraint is NOT VALID): the store never wrote any.

// Written out rather than imported from domain/template.ts: a migration once released never changes.
const CATEGORY = `category in ('NVIDIA', 'AMD', 'CPU')`;
const FLAGS = ['is_public', 'is_platform', 'is_serverless'].map((flag) => `${flag} in (0, 1)`).join(' and ');

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name === 'postgres') {
    await sql.raw(`alter table templates add constraint templates_category_known check (${CATEGORY}) not valid`).execute(db);
    await sql.raw(`alter table templates add constraint templates_flags_zero_or_one check (${FLAGS}) not valid`).execute(db);
    return;
  }
  const refused = `when not (${CATEGORY.replaceAll('category', 'new.category')} and ${FLAGS.replaceAll('is_', 'new.is_')})
begin
  select raise(abort, 'templates: category must be NVIDIA, AMD or CPU, and is_public, is_platform and is_serverless 0 or 1');
end`;
  await sql.raw(`create trigger templates_values_checked_insert before insert on templates for each row ${refused}`).execute(db);
  await sql
    .raw(
      `create trigger templates_values_checked_update before update of category, is_public, is_platform, is_serverless on templates
for each row ${refused}`,
    )
    .execute(db);
}
