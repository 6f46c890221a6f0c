import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';

// Webhooks are delivered with the accounts taking turns: one account's backlog delays another's event by at most one
// batch, while each endpoint's events still go in the order they were written.

forEachDialect('fair delivery', (dialect) => {
  let h: Harness;
  before(async () => {
    h = await startHarness(dialect);
  });
  after(() => h.close());

  const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
  const enqueue = (name: string, account: string, endpoint: string, ms: number) =>
    h.store.transaction((tx) =>
      tx.outbox.enqueue({
        eventId: name,
        type: 'release.created',
        subjectId: `rel_${name}`,
        orderingKey: endpoint,
        accountId: account,
        payload: JSON.stringify({ name }),
        createdAt: at(ms),
      }),
    );
  const claim = (limit: number, token: string) =>
    h.store.transaction((tx) => tx.outbox.claimDue(at(1_000_000), at(2_000_000), token, limit));

  test("a batch takes each account's oldest event before any account's second; an endpoint's order holds", async () => {
    // Account A: 90 events on 30 endpoints, written first; account B: one event, written last.
    for (let i = 0; i < 90; i++) await enqueue(`a${i}`, 'acc_a', `ep_a${i % 30}`, i);
    await enqueue('b0', 'acc_b', 'ep_b', 100);
    const first = (await claim(10, 'first')).map((e) => e.eventId);
    assert.equal(first.length, 10);
    assert.ok(first.includes('b0'), `B's one event is in the first batch: ${first.join(', ')}`);
    const second = (await claim(100, 'second')).map((e) => e.eventId);
    // Of each endpoint only its first undelivered event is due: 30 endpoints of A, less the 9 taken, less B's.
    assert.equal(second.length, 21);
    for (const id of [...first, ...second].filter((e) => e.startsWith('a')))
      assert.ok(Number(id.slice(1)) < 30, `${id} is first of its endpoint`);
  });
});
