import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';
import { bytesOf } from './0005-account-usage.ts';

// What each account holds (migrations 0005 and 0012) is counted once per statement on PostgreSQL, not once per row.
// Row by row, an import (one transaction) updated its account's usage row once for each template it wrote, and every
// such update of one row inside one transaction walks the chain of that row's versions the transaction made before:
// 20,000 templates imported at 2,400 a second, 100,000 at 470. Per statement, a batch of rows is one update per
// account, as a single create still is. The rows are summed by account, ordered by it (concurrent statements lock
// usage rows in the same order), and an account whose holdings did not change is not touched (an update of a
// template's runtime takes no lock on its owner's usage). SQLite's row triggers stay: it has no row versions.

type Counted = { table: string; column: string; amount: (rows: string) => string };

const COUNTED: Counted[] = [
  { table: 'templates', column: 'templates', amount: () => 'count(*)' },
  { table: 'templates', column: 'template_bytes', amount: (rows) => `sum(${bytesOf('new').replaceAll('new.', `${rows}.`)})` },
  { table: 'endpoints', column: 'endpoints', amount: () => 'count(*)' },
  { table: 'registry_auths', column: 'registry_auths', amount: () => 'count(*)' },
];

const TABLES = ['templates', 'endpoints', 'registry_auths'] as const;

/** The function of `table`'s statement trigger: adds what `added` holds and takes away what `removed` held. */
function usageFunction(table: string): string {
  const columns = COUNTED.filter((c) => c.table === table);
  const side = (rows: string, sign: string) =>
    `select ${rows}.owner_id as account_id, ${columns.map((c) => `${sign}${c.amount(rows)} as ${c.column}`).join(', ')}
     from ${rows} group by ${rows}.owner_id`;
  const names = columns.map((c) => c.column);
  const apply = (source: string) => `insert into account_usage as u (account_id, ${names.join(', ')})
    select account_id, ${names.map((n) => `sum(${n})`).join(', ')} from (${source}) change
    group by account_id having ${names.map((n) => `sum(${n}) <> 0`).join(' or ')}
    order by account_id
    on conflict (account_id) do update set ${names.map((n) => `${n} = u.${n} + excluded.${n}`).join(', ')}`;
  return `create function account_usage_of_${table}_statement() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    ${apply(side('added', ''))};
  elsif tg_op = 'DELETE' then
    ${apply(side('removed', '-'))};
  else
    ${apply(`${side('added', '')} union all ${side('removed', '-')}`)};
  end if;
  return null;
end $$`;
}

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  for (const table of TABLES) {
    await sql.raw(`drop trigger account_usage_of_${table} on ${table}`).execute(db);
    await sql.raw(`drop function account_usage_of_${table}()`).execute(db);
    await sql.raw(usageFunction(table)).execute(db);
    await sql
      .raw(`create trigger account_usage_of_${table}_insert after insert on ${table}
        referencing new table as added for each statement execute function account_usage_of_${table}_statement()`)
      .execute(db);
    await sql
      .raw(`create trigger account_usage_of_${table}_delete after delete on ${table}
        referencing old table as removed for each statement execute function account_usage_of_${table}_statement()`)
      .execute(db);
  }
  // Templates change owner and size when updated; endpoints and registry auths never change owner.
  await sql
    .raw(`create trigger account_usage_of_templates_update after update on templates
      referencing old table as removed new table as added for each statement execute function account_usage_of_templates_statement()`)
    .execute(db);
}
