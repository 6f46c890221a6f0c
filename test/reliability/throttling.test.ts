import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { Podplate } from '../../src/usecases/podplate.ts';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';

// Guessing keys is not free: failed authentications are counted per client address and answered 429 beyond
// AUTH_FAILURES_PER_MINUTE, while the address's valid keys go on working; unknown keys never enter the key cache.
// The per-key rate limit holds for the whole install: processes sharing a database share its buckets.

const RATE_LIMITED = 'https://podplate.dev/problems/rate-limited';

forEachDialect('throttling', (dialect) => {
  let h: Harness;
  let valid: string;
  before(async () => {
    h = await startHarness(dialect, { AUTH_FAILURES_PER_MINUTE: 5 });
    valid = await h.key('honest');
  });
  after(() => h.close());

  const from = (remoteAddress: string, authorization?: string, headers: Record<string, string> = {}) =>
    h.app.inject({
      method: 'GET',
      url: '/v1/templates',
      remoteAddress,
      headers: { ...headers, ...(authorization ? { authorization } : {}) },
    });
  const guess = (n: number) => `Bearer pp_guess${String(n).padStart(40, '0')}`;

  test('past the limit an address gets 429 with Retry-After; its valid keys still work; other addresses are untouched', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await from('10.0.0.1', guess(i))).statusCode, 401);
    const throttled = await from('10.0.0.1', guess(99));
    assert.equal(throttled.statusCode, 429);
    assert.equal(throttled.json().type, RATE_LIMITED);
    assert.ok(Number(throttled.headers['retry-after']) >= 1, String(throttled.headers['retry-after']));
    assert.match(throttled.json().detail, /failed authentications came from this address/);
    assert.equal((await from('10.0.0.1')).statusCode, 429, 'no key at all counts as a failure too');
    assert.equal((await from('10.0.0.1', `Bearer ${valid}`)).statusCode, 200, 'a valid key from the address works');
    assert.equal((await from('10.0.0.2', guess(1))).statusCode, 401, 'another address is not throttled');
  });

  test('keys that do not exist are never cached, so guesses cannot push real keys out', async () => {
    const before = h.podplate.keys.cached;
    for (let i = 0; i < 50; i++) await from(`10.1.0.${i}`, guess(1000 + i));
    assert.equal(h.podplate.keys.cached, before);
    assert.equal((await from('10.2.0.1', `Bearer ${await h.key('newcomer')}`)).statusCode, 200);
    assert.equal(h.podplate.keys.cached, before + 1);
  });

  test('the address is the socket peer: X-Forwarded-For is not believed unless TRUST_PROXY says so', async () => {
    for (let i = 0; i < 6; i++) await from('10.3.0.1', guess(i), { 'x-forwarded-for': `192.0.2.${i}` });
    assert.equal((await from('10.3.0.1', guess(7), { 'x-forwarded-for': '192.0.2.200' })).statusCode, 429);
  });
});

test('behind a trusted proxy, each client address in X-Forwarded-For is counted apart', async () => {
  const h = await startHarness('sqlite', { AUTH_FAILURES_PER_MINUTE: 2, TRUST_PROXY: '127.0.0.1' });
  try {
    const via = (client: string) =>
      h.app.inject({
        method: 'GET',
        url: '/v1/templates',
        remoteAddress: '127.0.0.1',
        headers: { authorization: 'Bearer pp_nope', 'x-forwarded-for': client },
      });
    assert.deepEqual([(await via('198.51.100.1')).statusCode, (await via('198.51.100.1')).statusCode], [401, 401]);
    assert.equal((await via('198.51.100.1')).statusCode, 429);
    assert.equal((await via('198.51.100.2')).statusCode, 401);
  } finally {
    await h.close();
  }
});

for (const LIMIT of [40, 600])
  forEachDialect(`one rate limit of ${LIMIT} a minute for the whole install`, (dialect) => {
    let h: Harness;
    let second: { app: FastifyInstance; store: Store } | undefined;
    before(async () => {
      h = await startHarness(dialect, { RATE_LIMIT_PER_MINUTE: LIMIT });
    });
    after(async () => {
      await second?.app.close();
      await second?.store.close();
      await h.close();
    });

    test('a key spread over processes that share a database gets no more than the limit (SQLite: one process)', async () => {
      const key = await h.key('busy');
      const apps = [h.app];
      if (dialect === 'postgres') {
        // A second process: its own store, use cases and app over the same database.
        const store = Store.open(dialectFor(h.database.url));
        const app = await buildApp({
          podplate: new Podplate(store),
          config: { REQUEST_TIMEOUT_MS: 30_000, HEADERS_TIMEOUT_MS: 10_000, RATE_LIMIT_PER_MINUTE: LIMIT },
        });
        second = { app, store };
        apps.push(app);
      }
      const started = Date.now();
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 60; i++) {
        const app = apps[i % apps.length] as FastifyInstance;
        const batch = await Promise.all(
          [0, 1].map(() => app.inject({ method: 'GET', url: '/v1/templates', headers: { authorization: `Bearer ${key}` } })),
        );
        statuses.push(...batch.map((r) => r.statusCode));
      }
      const allowed = statuses.filter((s) => s === 200).length;
      // The bucket holds LIMIT and refills LIMIT a minute: what the test's own duration refilled is allowed on top.
      // Leased tokens a process has not spent yet are allowed less, never more.
      const refilled = Math.ceil(((Date.now() - started) / 60_000) * LIMIT);
      const leasedUnspent = dialect === 'postgres' ? 2 * Math.ceil(LIMIT / 60) : 0;
      assert.ok(allowed >= LIMIT - leasedUnspent && allowed <= LIMIT + refilled, `${allowed} allowed in ${Date.now() - started} ms`);
      assert.equal(statuses.filter((s) => s === 429).length, statuses.length - allowed);
      const refused = await apps[0]?.inject({ method: 'GET', url: '/v1/templates', headers: { authorization: `Bearer ${key}` } });
      assert.equal(refused?.statusCode, 429);
      assert.ok(Number(refused?.headers['retry-after']) >= 1);
    });
  });

forEachDialect('shared rate-limit buckets', (dialect) => {
  test('buckets idle for as long as they take to refill are forgotten, so failing addresses leave no rows', async () => {
    const h = await startHarness(dialect);
    try {
      await h.store.transaction((tx) => tx.rateBuckets.take('auth-failures 203.0.113.9', 1, 60, 0.001));
      await h.store.transaction((tx) => tx.rateBuckets.take('key key_recent', 1, 60, 0.001));
      assert.equal(await h.store.transaction((tx) => tx.rateBuckets.forgetIdle(60_000)), 0, 'nothing idle yet');
      await new Promise((resolve) => setTimeout(resolve, 30));
      assert.equal(await h.store.transaction((tx) => tx.rateBuckets.forgetIdle(10)), 2);
    } finally {
      await h.close();
    }
  });
});
