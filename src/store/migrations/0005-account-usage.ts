import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// What each account holds, for its quotas: templates, their bytes, endpoints. Kept by triggers, so that every
// writer (the service, an operator's SQL, an import) keeps it true, and counted inside the writing transaction: on
// PostgreSQL the usage row's lock makes concurrent creates of one account take turns, so none overshoots a quota.

/**
 * A template's bytes: its text as stored (env, ports and commands as JSON text), plus 512 for the rest of its
 * representation. Within a few hundred bytes of its JSON, and, unlike the stored JSON itself, never missing.
 */
export const bytesOf = (row: 'new' | 'old') =>
  [
    'name',
    'image_name',
    'volume_mount_path',
    'container_registry_auth_id',
    'docker_entrypoint',
    'docker_start_cmd',
    'env',
    'ports',
    'readme',
  ]
    .map((c) => `octet_length(${row}.${c})`)
    .join(' + ')
    .concat(' + 512');

const CONTENT = [
  'owner_id',
  'name',
  'image_name',
  'volume_mount_path',
  'container_registry_auth_id',
  'docker_entrypoint',
  'docker_start_cmd',
  'env',
  'ports',
  'readme',
];

/** Adds `templates`, `bytes` and `endpoints` (SQL expressions) to the usage of `account` (an SQL expression). */
const add = (account: string, templates: string, bytes: string, endpoints: string) =>
  `insert into account_usage as u (account_id, templates, template_bytes, endpoints) values (${account}, ${templates}, ${bytes}, ${endpoints})
   on conflict (account_id) do update set templates = u.templates + excluded.templates,
     template_bytes = u.template_bytes + excluded.template_bytes, endpoints = u.endpoints + excluded.endpoints`;

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('account_usage')
    .addColumn('account_id', 'text', (c) => c.primaryKey())
    .addColumn('templates', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('template_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('endpoints', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  if (dialect.name === 'postgres') {
    const changed = CONTENT.map((c) => `new.${c} is distinct from old.${c}`).join(' or ');
    await sql
      .raw(`create function account_usage_of_templates() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and not (${changed}) then
    return null;
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    ${add('old.owner_id', '-1', `-(${bytesOf('old')})`, '0')};
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    ${add('new.owner_id', '1', bytesOf('new'), '0')};
  end if;
  return null;
end $$`)
      .execute(db);
    await sql
      .raw(
        'create trigger account_usage_of_templates after insert or update or delete on templates for each row execute function account_usage_of_templates()',
      )
      .execute(db);
    await sql
      .raw(`create function account_usage_of_endpoints() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    ${add('old.owner_id', '0', '0', '-1')};
  else
    ${add('new.owner_id', '0', '0', '1')};
  end if;
  return null;
end $$`)
      .execute(db);
    await sql
      .raw(
        'create trigger account_usage_of_endpoints after insert or delete on endpoints for each row execute function account_usage_of_endpoints()',
      )
      .execute(db);
  } else {
    const changed = CONTENT.map((c) => `new.${c} is not old.${c}`).join(' or ');
    await sql
      .raw(`create trigger account_usage_insert after insert on templates begin ${add('new.owner_id', '1', bytesOf('new'), '0')}; end`)
      .execute(db);
    await sql
      .raw(
        `create trigger account_usage_delete after delete on templates begin ${add('old.owner_id', '-1', `-(${bytesOf('old')})`, '0')}; end`,
      )
      .execute(db);
    await sql
      .raw(`create trigger account_usage_update after update of ${CONTENT.join(', ')} on templates when ${changed} begin
  ${add('old.owner_id', '-1', `-(${bytesOf('old')})`, '0')};
  ${add('new.owner_id', '1', bytesOf('new'), '0')};
end`)
      .execute(db);
    await sql
      .raw(`create trigger account_usage_endpoint_insert after insert on endpoints begin ${add('new.owner_id', '0', '0', '1')}; end`)
      .execute(db);
    await sql
      .raw(`create trigger account_usage_endpoint_delete after delete on endpoints begin ${add('old.owner_id', '0', '0', '-1')}; end`)
      .execute(db);
  }

  // What accounts held before: counted once. (`where true` keeps SQLite from reading `on conflict` as a join's `on`.)
  const bytes = bytesOf('new').replaceAll('new.', '');
  await sql
    .raw(`insert into account_usage (account_id, templates, template_bytes, endpoints)
      select owner_id, count(*), sum(${bytes}), 0 from templates group by owner_id`)
    .execute(db);
  await sql
    .raw(`insert into account_usage (account_id, templates, template_bytes, endpoints)
      select owner_id, 0, 0, count(*) from endpoints where true group by owner_id
      on conflict (account_id) do update set endpoints = excluded.endpoints`)
    .execute(db);
}
