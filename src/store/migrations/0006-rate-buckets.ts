import type { Kysely } from 'kysely';

// Token buckets shared by every process of an install (rate limits, failed-authentication throttling): each
// process takes tokens in chunks and spends them itself, so a bucket is written once per chunk, not per request.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_buckets')
    .addColumn('bucket', 'text', (c) => c.primaryKey())
    .addColumn('tokens', 'double precision', (c) => c.notNull())
    .addColumn('updated_ms', 'double precision', (c) => c.notNull())
    .addColumn('granted', 'double precision', (c) => c.notNull())
    .execute();
}
