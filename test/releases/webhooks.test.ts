import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { backoffMs, Deliverer } from '../../src/releases/deliverer.ts';
import { signature } from '../../src/releases/signature.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';
import { freePort } from '../support/process.ts';
import { eventually, Receiver, SECRET } from '../support/receiver.ts';

const silent = { info() {}, warn() {}, error() {} } as never;

test('signatures follow Standard Webhooks (the example of its specification)', () => {
  // From the Standard Webhooks reference tests.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = '{"test": 2432232314}';
  assert.equal(signature(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
});

test('backoff doubles up to its cap, with jitter between half and all of it', () => {
  assert.equal(
    backoffMs(1, 1000, 60_000, () => 1),
    1000,
  );
  assert.equal(
    backoffMs(3, 1000, 60_000, () => 1),
    4000,
  );
  assert.equal(
    backoffMs(3, 1000, 60_000, () => 0),
    2000,
  );
  assert.equal(
    backoffMs(30, 1000, 60_000, () => 1),
    60_000,
  );
});

forEachDialect('webhook delivery from the outbox', (dialect) => {
  let h: Harness;
  let receiver: Receiver;
  let deliverer: Deliverer;
  let alice: string;
  let platform: string;
  let port: number;

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    platform = await h.key('ops', 'platform');
    receiver = new Receiver(SECRET);
    port = await freePort(); // nothing listens there yet: the receiver starts out down
    deliverer = new Deliverer(
      h.store,
      { url: `http://127.0.0.1:${port}/hooks`, secret: SECRET, timeoutMs: 2000, retryBaseMs: 50, retryMaxMs: 300, pollMs: 20 },
      silent,
    );
    deliverer.start();
  });
  after(async () => {
    await deliverer.stop();
    await receiver.close();
    await h.close();
  });

  test('a receiver that is down, then failing, then up gets every release, signed, with attempts and errors shown meanwhile', async () => {
    const t = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ isServerless: true }) })).body;
    const e = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'hooked', templateId: t.id } })).body;
    for (let i = 0; i < 5; i++) {
      assert.equal((await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: `v${i}` } })).status, 200);
    }
    const releases = async () => (await h.call('GET', `/v1/endpoints/${e.id}/releases`, { key: platform })).body;
    // The oldest release is retried while the receiver is down; the newer ones wait their turn behind it.
    await eventually(async () => (await releases()).at(-1).delivery.attempts >= 2, 'retries while down');
    const waiting = await releases();
    assert.match(waiting.at(-1).delivery.lastError, /ECONNREFUSED/);
    assert.deepEqual(
      waiting.slice(0, -1).map((r: { delivery: { attempts: number } }) => r.delivery.attempts),
      [0, 0, 0, 0],
    );

    await receiver.listen(port);
    receiver.status = 500;
    await eventually(
      async () => (await releases()).some((r: { delivery: { lastError: string } }) => r.delivery.lastError === 'HTTP 500'),
      'a failing receiver',
    );
    receiver.status = 200;

    await eventually(
      async () => (await releases()).every((r: { delivery: { deliveredAt: string | null } }) => r.delivery.deliveredAt !== null),
      'all delivered',
    );
    const list = await releases();
    assert.equal(list.length, 5);
    assert.deepEqual([...receiver.ids()].sort(), list.map((r: { id: string }) => `evt_${r.id}`).sort());
    assert.ok(
      receiver.received.every((r) => r.verified),
      'every signature checks out',
    );
    for (const r of list) assert.equal(r.delivery.lastError, null);
    const event = receiver.received.find((r) => r.id === `evt_${list[0].id}`)?.body;
    assert.equal(event.type, 'release.created');
    assert.equal(event.data.release.version, list[0].version);
    assert.equal(event.data.endpoint.id, e.id);
    assert.equal(event.data.template.id, t.id);
    assert.equal(event.data.template.readme, 'v4');
    assert.equal(event.data.template.ownerId, undefined);
    assert.equal((await h.store.outbox.backlog()).pending, 0);
  });
});

forEachDialect('webhook order', (dialect) => {
  let h: Harness;
  let receiver: Receiver;
  let deliverer: Deliverer;
  before(async () => {
    h = await startHarness(dialect);
    receiver = new Receiver(SECRET);
    const port = await receiver.listen();
    deliverer = new Deliverer(
      h.store,
      { url: `http://127.0.0.1:${port}/`, secret: SECRET, timeoutMs: 2000, retryBaseMs: 30, retryMaxMs: 100, pollMs: 10 },
      silent,
    );
  });
  after(async () => {
    await deliverer.stop();
    await receiver.close();
    await h.close();
  });

  test("an endpoint's releases arrive in the order they were made, even when an earlier one needs retries", async () => {
    const alice = await h.key('alice');
    const t = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ isServerless: true }) })).body;
    const e = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'ordered', templateId: t.id } })).body;
    const other = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ isServerless: true }) })).body;
    await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'other', templateId: other.id } });
    for (let i = 0; i < 4; i++) await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: `v${i}` } });
    await h.call('PATCH', `/v1/templates/${other.id}`, { key: alice, body: { readme: 'independent' } });
    const releases = (await h.call('GET', `/v1/endpoints/${e.id}/releases`, { key: alice })).body.reverse();
    receiver.refuse.set(`evt_${releases[0].id}`, 5);
    deliverer.start();
    await eventually(() => releases.every((r: { id: string }) => receiver.ids().has(`evt_${r.id}`)), 'all delivered');
    const order = receiver.received.filter((r) => r.body.data.endpoint.id === e.id).map((r) => r.body.data.release.version);
    assert.deepEqual(order, [2, 3, 4, 5]);
    assert.equal(receiver.refuse.get(`evt_${releases[0].id}`), 0, 'the first release was refused five times first');
    const independent = receiver.received.findIndex((r) => r.body.data.endpoint.id !== e.id);
    assert.ok(independent >= 0 && independent < receiver.received.length - 1, "another endpoint's release does not wait behind it");
  });
});
