import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// Container registry auths (their passwords sealed), the index that finds the templates referring to one, and the
// row that tells whether a process holds the key the secrets were sealed with.
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('registry_auths')
    .addColumn('seq', dialect.serialType, (c) => dialect.serialPrimaryKey(c))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('password', 'text', (c) => c.notNull())
    .addColumn('created_at', dialect.timestampType, (c) => c.notNull())
    .addUniqueConstraint('registry_auths_owner_name_unique', ['owner_id', 'name'])
    .execute();
  await db.schema.createIndex('registry_auths_owner_seq').on('registry_auths').columns(['owner_id', 'seq']).execute();
  // Deleting an auth asks whether a template refers to it; most templates refer to none, so they stay out of the index.
  await db.schema
    .createIndex('templates_registry_auth')
    .on('templates')
    .column('container_registry_auth_id')
    .where(sql.ref('container_registry_auth_id'), '<>', '')
    .execute();
  await db.schema
    .createTable('secret_key_check')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .execute();
}
