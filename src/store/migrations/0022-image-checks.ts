import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// Image checks (usecases/image-checks.ts): what the image's registry said, kept in columns of the template row so that
// its representation (`body`) and the read cache follow it like any other column; when a check is due, and which
// process holds it (a lease, so that one check of a template runs at a time across processes and one left by a killed
// process is taken up again); the digest each revision pinned, and the one each release rolls out.
//
// Every existing template is due for a check, and its representation, which now shows `imageCheck`, is built again
// (Store.migrate builds every cleared body). The trigger of migration 0004, which clears a body when a column it
// shows changes without it, is made again with the check's columns among those shown, written out as 0004 did.

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
  'image_check_status',
  'image_checked_at',
  'image_digest',
  'image_platforms',
  'image_size_bytes',
  'image_cuda_version',
  'image_check_reason',
];

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const timestamp = dialect.timestampType;
  const columns: [string, string, boolean, unknown?][] = [
    ['image_check_status', 'text', true, 'pending'],
    ['image_checked_at', timestamp, false],
    ['image_digest', 'text', false],
    ['image_platforms', 'text', true, '[]'],
    ['image_size_bytes', 'bigint', false],
    ['image_cuda_version', 'text', false],
    ['image_check_reason', 'text', false],
    // The queue: when the next attempt is due (null: none is), attempts since the last answer, the lease.
    ['image_check_due_at', timestamp, false],
    ['image_check_attempts', 'integer', true, 0],
    ['image_check_leased_until', timestamp, false],
    ['image_check_lease', 'text', false],
    // The revision a check was asked for at: a check's result is kept only if none was asked since it began.
    ['image_check_revision', 'integer', true, 0],
  ];
  for (const [name, type, notNull, fallback] of columns) {
    await db.schema
      .alterTable('templates')
      .addColumn(name, sql.raw(type), (c) => {
        let column = fallback === undefined ? c : c.defaultTo(fallback);
        if (notNull) column = column.notNull();
        return column;
      })
      .execute();
  }
  await db.schema
    .createIndex('templates_image_check_due')
    .on('templates')
    .column('image_check_due_at')
    .where(sql.ref('image_check_due_at'), 'is not', null)
    .execute();
  await db.schema.alterTable('template_revisions').addColumn('image_digest', 'text').execute();
  await db.schema.alterTable('releases').addColumn('image_digest', 'text').execute();

  if (dialect.name === 'postgres') {
    const row = (prefix: string) => SHOWN.map((c) => `${prefix}.${c}`).join(', ');
    await sql
      .raw(`create or replace function templates_body_follows_columns() returns trigger language plpgsql as $$
begin
  if new.body is not distinct from old.body and (${row('new')}) is distinct from (${row('old')}) then
    new.body := null;
  end if;
  return new;
end $$`)
      .execute(db);
  } else {
    const changed = SHOWN.map((c) => `new.${c} is not old.${c}`).join(' or ');
    await sql.raw('drop trigger templates_body_follows_columns').execute(db);
    await sql
      .raw(`create trigger templates_body_follows_columns after update of ${SHOWN.join(', ')} on templates
for each row when new.body is old.body and (${changed})
begin
  update templates set body = null where seq = new.seq;
end`)
      .execute(db);
  }
  // Every template is due for its first check, and shows imageCheck once its body is built again.
  await sql`update templates set body = null, image_check_due_at = ${new Date().toISOString()}`.execute(db);
}
