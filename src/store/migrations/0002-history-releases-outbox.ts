import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// Revisions, endpoints, releases, the outbox, idempotent responses and usage reports.

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const timestamp = dialect.timestampType;

  await db.schema
    .createTable('template_revisions')
    .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id').onDelete('cascade'))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('snapshot', 'text', (c) => c.notNull())
    .addColumn('diff', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('template_revisions_pk', ['template_id', 'revision'])
    .execute();

  await db.schema
    .createTable('releases')
    .addColumn('seq', dialect.serialType, (c) => dialect.serialPrimaryKey(c))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('endpoints.id').onDelete('cascade'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('template_revision', 'integer', (c) => c.notNull())
    .addColumn('diff', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('workers_updated', 'integer', (c) => c.notNull())
    .addColumn('workers_total', 'integer', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .addUniqueConstraint('releases_endpoint_version_unique', ['endpoint_id', 'version'])
    .execute();
  await db.schema.createIndex('releases_endpoint_seq').on('releases').columns(['endpoint_id', 'seq']).execute();

  // The transactional outbox: written in the same transaction as the change it announces.
  await db.schema
    .createTable('outbox')
    .addColumn('seq', dialect.serialType, (c) => dialect.serialPrimaryKey(c))
    .addColumn('event_id', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('ordering_key', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', timestamp, (c) => c.notNull())
    .addColumn('leased_until', timestamp)
    .addColumn('lease_token', 'text')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', timestamp)
    .execute();
  await db.schema.createIndex('outbox_due').on('outbox').columns(['delivered_at', 'next_attempt_at']).execute();
  await db.schema.createIndex('outbox_subject').on('outbox').columns(['subject_id']).execute();
  await db.schema.createIndex('outbox_ordering').on('outbox').columns(['ordering_key', 'seq']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').columns(['created_at']).execute();

  await db.schema
    .createTable('usage_reports')
    .addColumn('usage_id', 'text', (c) => c.primaryKey())
    .addColumn('template_id', 'text', (c) => c.notNull())
    .addColumn('runtime_in_min', 'bigint', (c) => c.notNull())
    .addColumn('earned', 'double precision', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute();
}
