import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { Housekeeping } from '../../src/usecases/housekeeping.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// Housekeeping: delivered outbox events past their retention and responses to Idempotency-Keys past their 24 hours are
// purged, a small batch per statement; pending events are never touched, whatever their age.

const DAY = 24 * 60 * 60 * 1000;
const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();

forEachDialect('housekeeping', (dialect) => {
  let h: Harness;
  let raw: Kysely<any>;
  before(async () => {
    h = await startHarness(dialect);
    raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
  });
  after(async () => {
    await raw.destroy();
    await h.close();
  });

  const event = async (name: string, createdMsAgo: number, deliveredMsAgo?: number) => {
    await h.store.transaction((tx) =>
      tx.outbox.enqueue({
        eventId: name,
        type: 'release.created',
        subjectId: `rel_${name}`,
        orderingKey: `ep_${name}`,
        accountId: 'acc_housekeeping',
        payload: '{}',
        createdAt: at(createdMsAgo),
      }),
    );
    if (deliveredMsAgo !== undefined)
      await sql`update outbox set delivered_at = ${at(deliveredMsAgo)} where event_id = ${name}`.execute(raw);
  };
  const events = async () =>
    (await sql<{ event_id: string }>`select event_id from outbox order by event_id`.execute(raw)).rows.map((r) => r.event_id);

  test('delivered events older than the retention go, in batches; recent and pending ones stay', async () => {
    for (let i = 0; i < 10; i++) await event(`old-${String(i).padStart(2, '0')}`, 30 * DAY, 8 * DAY + i);
    await event('recent-1', 30 * DAY, 6 * DAY);
    await event('recent-2', 1000, 500);
    await event('pending-old', 60 * DAY);
    await event('pending-new', 1000);
    const swept = await new Housekeeping(h.store, { outboxRetentionDays: 7, batch: 3 }).run();
    assert.equal(swept?.deliveredEvents, 10);
    assert.deepEqual(await events(), ['pending-new', 'pending-old', 'recent-1', 'recent-2']);
    // A retention of 0 days purges every delivered event, never a pending one.
    assert.equal((await new Housekeeping(h.store, { outboxRetentionDays: 0 }).run())?.deliveredEvents, 2);
    assert.deepEqual(await events(), ['pending-new', 'pending-old']);
  });

  test('one run deletes at most its batches; the next run goes on', async () => {
    for (let i = 0; i < 7; i++) await event(`many-${i}`, 30 * DAY, 10 * DAY);
    const housekeeping = new Housekeeping(h.store, { outboxRetentionDays: 7, batch: 2, mostBatches: 2 });
    assert.equal((await housekeeping.run())?.deliveredEvents, 4);
    assert.equal((await housekeeping.run())?.deliveredEvents, 3);
  });

  test('responses kept for Idempotency-Keys are forgotten after 24 hours: a retry then makes a new template', async () => {
    const key = await h.key('retrier');
    const send = (idempotencyKey: string) =>
      h.call('POST', '/v1/templates', {
        key,
        body: templateBody({ name: `once ${idempotencyKey}` }),
        headers: { 'idempotency-key': idempotencyKey },
      });
    const first = await send('aged');
    const kept = await send('fresh');
    assert.equal((await send('aged')).body.id, first.body.id, 'a retry within the retention gets the first response');
    await sql`update idempotency_keys set created_at = ${at(DAY + 60_000)} where key = 'aged'`.execute(raw);
    const swept = await new Housekeeping(h.store, { outboxRetentionDays: 7, batch: 1 }).run();
    assert.equal(swept?.expiredResponses, 1);
    assert.equal((await send('fresh')).body.id, kept.body.id, 'the response still within its 24 hours is kept');
    const again = await send('aged');
    assert.equal(again.status, 409, 'the response was forgotten: the retry is a new request, whose name is taken');
  });

  test('the server starts and stops it with the process: stop waits for a run under way', async () => {
    const housekeeping = new Housekeeping(h.store, { outboxRetentionDays: 7 });
    housekeeping.start(60_000);
    const running = housekeeping.run();
    await housekeeping.stop();
    assert.ok(await running);
  });
});
