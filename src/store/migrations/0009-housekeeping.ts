import { type Kysely, sql } from 'kysely';

// Housekeeping: delivered outbox rows are purged after a retention (usecases/housekeeping.ts), and the outbox's
// queries read only what they need. Pending events are found by partial indexes that hold the undelivered rows alone,
// so a table of a million delivered rows costs the deliverer nothing; the purge finds old deliveries by their own
// index. The index over every row that the pending ones replace is dropped. Unbinding (`where endpoint_id = ?`) reads
// down an index of the bound templates.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index outbox_pending on outbox (seq) where delivered_at is null`.execute(db);
  await sql`create index outbox_pending_ordering on outbox (ordering_key, seq) where delivered_at is null`.execute(db);
  await sql`create index outbox_delivered on outbox (delivered_at) where delivered_at is not null`.execute(db);
  await sql`drop index outbox_due`.execute(db);
  await sql`drop index outbox_ordering`.execute(db);
  await sql`create index templates_endpoint on templates (endpoint_id) where endpoint_id is not null`.execute(db);
}
