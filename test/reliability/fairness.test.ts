import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BODY_BYTES_PER_TOKEN, bodyCost } from '../../src/http/plugins/rate-limit.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// The rate limit counts what requests cost, not only how many: besides a token a request, a key's bodies take a token
// for each 16 KiB from a bucket of their own, which holds ten seconds' worth; a key sending large bodies is slowed
// to its share, and other keys go on as before.

forEachDialect('the rate limit by cost', (dialect) => {
  let h: Harness;
  before(async () => {
    h = await startHarness(dialect, { RATE_LIMIT_PER_MINUTE: 60 });
  });
  after(() => h.close());

  test('150 KB bodies cost 9 tokens each of a burst of 10: the second at once is a 429, while another key is served', async () => {
    const heavy = await h.key('heavy');
    const light = await h.key('light');
    const t = (await h.call('POST', '/v1/templates', { key: heavy, body: templateBody() })).body;
    const big = (i: number) => ({ env: Object.fromEntries(Array.from({ length: 5 }, (_, k) => [`V${k}`, String(i).repeat(30_000)])) });
    assert.equal(Math.floor(Buffer.byteLength(JSON.stringify(big(0))) / BODY_BYTES_PER_TOKEN), 9);
    assert.equal((await h.call('PATCH', `/v1/templates/${t.id}`, { key: heavy, body: big(1) })).status, 200);
    // The bodies' bucket (a sixth of 60, refilled at one a second) lacks 8 tokens: seconds away.
    const refused = await h.call('PATCH', `/v1/templates/${t.id}`, { key: heavy, body: big(2) });
    assert.equal(refused.status, 429);
    assert.match(refused.body.detail, /or sent more than 60 × 16 KiB of bodies, in a minute/);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: heavy })).status, 200, 'its requests without a body go on');
    for (let i = 0; i < 20; i++) assert.equal((await h.call('GET', '/v1/me', { key: light })).status, 200);
  });

  test('a body whose length is not declared (chunked) counts as the largest a body may be', () => {
    assert.equal(bodyCost({ headers: { 'transfer-encoding': 'chunked' } }), 64);
    assert.equal(bodyCost({ headers: { 'content-length': String(BODY_BYTES_PER_TOKEN * 2 - 1) } }), 1);
    assert.equal(bodyCost({ headers: {} }), 0);
  });
});
