import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// Registry auths count against a quota too (QUOTA_REGISTRY_AUTHS_PER_ACCOUNT): what each account holds of them is
// kept in account_usage by triggers, like its templates and endpoints (migration 0005), so that the usage row's lock
// makes concurrent creates of one account take turns and none overshoots.
//
// History is bounded by pruning inside the update (store/templates.ts pruneRevisions, store/endpoints.ts
// pruneReleases): both read down keys that exist already (template_revisions' primary key, releases'
// (endpoint_id, version) unique key, outbox_subject), so this migration adds no index for them.

/** Adds `n` (an SQL expression) to the registry auths of `account` (an SQL expression). */
const add = (account: string, n: string) =>
  `insert into account_usage as u (account_id, registry_auths) values (${account}, ${n})
   on conflict (account_id) do update set registry_auths = u.registry_auths + excluded.registry_auths`;

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .alterTable('account_usage')
    .addColumn('registry_auths', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  if (dialect.name === 'postgres') {
    await sql
      .raw(`create function account_usage_of_registry_auths() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    ${add('old.owner_id', '-1')};
  else
    ${add('new.owner_id', '1')};
  end if;
  return null;
end $$`)
      .execute(db);
    await sql
      .raw(
        'create trigger account_usage_of_registry_auths after insert or delete on registry_auths for each row execute function account_usage_of_registry_auths()',
      )
      .execute(db);
  } else {
    await sql
      .raw(`create trigger account_usage_registry_auth_insert after insert on registry_auths begin ${add('new.owner_id', '1')}; end`)
      .execute(db);
    await sql
      .raw(`create trigger account_usage_registry_auth_delete after delete on registry_auths begin ${add('old.owner_id', '-1')}; end`)
      .execute(db);
  }

  // What accounts held before: counted once. (`where true` keeps SQLite from reading `on conflict` as a join's `on`.)
  await sql
    .raw(`insert into account_usage (account_id, registry_auths)
      select owner_id, count(*) from registry_auths where true group by owner_id
      on conflict (account_id) do update set registry_auths = excluded.registry_auths`)
    .execute(db);
}
