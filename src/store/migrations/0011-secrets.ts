import type { Kysely } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// Each account's secrets, their values sealed (sealing/keyring.ts), named like env variables, unique per account.
export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .createTable('secrets')
    .addColumn('seq', dialect.serialType, (c) => dialect.serialPrimaryKey(c))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', dialect.timestampType, (c) => c.notNull())
    .addColumn('updated_at', dialect.timestampType, (c) => c.notNull())
    .addUniqueConstraint('secrets_owner_name_unique', ['owner_id', 'name'])
    .execute();
  await db.schema.createIndex('secrets_owner_seq').on('secrets').columns(['owner_id', 'seq']).execute();
}
