import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// A template's stored representation (`body`) can never be staler than its row, whoever writes the row: an update
// that changes a column the representation shows, without writing a new representation in the same statement,
// clears it. Reads build a cleared representation from the columns (and `migrate` stores it again). The store
// writes both together, so its own writes keep theirs; an operator's `update templates set image_name = …`, or an
// older process that knows nothing of `body`, leaves none behind to be served.

/** Every column the representation shows (domain/template.ts `templateJson`). */
const SHOWN = [
  'id',
  'name',
  'image_name',
  'category',
  'container_disk_in_gb',
  'volume_in_gb',
  'volume_mount_path',
  'container_registry_auth_id',
  'docker_entrypoint',
  'docker_start_cmd',
  'env',
  'ports',
  'readme',
  'is_public',
  'is_platform',
  'is_serverless',
  'earned',
  'runtime_in_min',
  'revision',
  'created_at',
  'updated_at',
];

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  if (dialect.name === 'postgres') {
    const row = (prefix: string) => SHOWN.map((c) => `${prefix}.${c}`).join(', ');
    await sql
      .raw(`create function templates_body_follows_columns() returns trigger language plpgsql as $$
begin
  if new.body is not distinct from old.body and (${row('new')}) is distinct from (${row('old')}) then
    new.body := null;
  end if;
  return new;
end $$`)
      .execute(db);
    await sql
      .raw(`create trigger templates_body_follows_columns before update on templates
for each row execute function templates_body_follows_columns()`)
      .execute(db);
    return;
  }
  const changed = SHOWN.map((c) => `new.${c} is not old.${c}`).join(' or ');
  await sql
    .raw(`create trigger templates_body_follows_columns after update of ${SHOWN.join(', ')} on templates
for each row when new.body is old.body and (${changed})
begin
  update templates set body = null where seq = new.seq;
end`)
    .execute(db);
}
