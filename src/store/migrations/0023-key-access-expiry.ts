import { type Kysely, sql } from 'kysely';
import type { SqlDialect } from '../dialect.ts';

// API keys gain a label, an access (read-write or read) and an expiry; when each was last used is kept apart, in
// api_key_uses, so that noting a use never changes a key's row (which the read cache would then forget). Revisions
// are indexed by the key that made them.

/**
 * Not compatible: a process of the version before would let a read-only key write and an expired key in.
 * (Processes before 0023 know no compatibility record, and stop on any migration they don't know.)
 */
export const compatible = false;

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('label', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('access', 'text', (c) => c.notNull().defaultTo('read-write').check(sql`access in ('read-write', 'read')`))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('expires_at', dialect.timestampType).execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'created_at']).execute();
  // Housekeeping keeps an ended key that history names (its author), and asks so down this index.
  await db.schema.createIndex('template_revisions_key').on('template_revisions').column('key_id').execute();
  await db.schema
    .createTable('api_key_uses')
    .addColumn('key_id', 'text', (c) => c.primaryKey().references('api_keys.id'))
    .addColumn('last_used_at', dialect.timestampType, (c) => c.notNull())
    .execute();
}
