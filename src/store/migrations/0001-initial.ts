import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// Accounts, API keys and templates.

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  const timestamp = dialect.timestampType;
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('user', 'platform')`))
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('revoked_at', timestamp)
    .execute();

  await db.schema
    .createTable('templates')
    .addColumn('seq', dialect.serialType, (c) => dialect.serialPrimaryKey(c))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('endpoint_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('image_name', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull())
    .addColumn('container_disk_in_gb', 'integer', (c) => c.notNull())
    .addColumn('volume_in_gb', 'integer', (c) => c.notNull())
    .addColumn('volume_mount_path', 'text', (c) => c.notNull())
    .addColumn('container_registry_auth_id', 'text', (c) => c.notNull())
    .addColumn('docker_entrypoint', 'text', (c) => c.notNull())
    .addColumn('docker_start_cmd', 'text', (c) => c.notNull())
    .addColumn('env', 'text', (c) => c.notNull())
    .addColumn('ports', 'text', (c) => c.notNull())
    .addColumn('readme', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('is_platform', 'integer', (c) => c.notNull())
    .addColumn('is_serverless', 'integer', (c) => c.notNull())
    .addColumn('earned', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('runtime_in_min', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .addColumn('search', 'text', (c) => c.notNull())
    .addUniqueConstraint('templates_owner_name_unique', ['owner_id', 'name'])
    .execute();
  // Keyset paging walks `seq` downwards inside each visibility scope.
  await db.schema.createIndex('templates_owner_seq').on('templates').columns(['owner_id', 'seq']).execute();
  await db.schema.createIndex('templates_public_seq').on('templates').columns(['is_public', 'seq']).execute();
  await db.schema.createIndex('templates_platform_seq').on('templates').columns(['is_platform', 'seq']).execute();

  await db.schema
    .createTable('endpoints')
    .addColumn('seq', dialect.serialType, (c) => dialect.serialPrimaryKey(c))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('template_id', 'text', (c) => c.notNull().unique().references('templates.id'))
    .addColumn('workers_min', 'integer', (c) => c.notNull())
    .addColumn('workers_max', 'integer', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', timestamp, (c) => c.notNull())
    .addColumn('updated_at', timestamp, (c) => c.notNull())
    .addUniqueConstraint('endpoints_owner_name_unique', ['owner_id', 'name'])
    .execute();
  await db.schema.createIndex('endpoints_owner_seq').on('endpoints').columns(['owner_id', 'seq']).execute();
}
