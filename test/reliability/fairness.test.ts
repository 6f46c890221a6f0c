import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BODY_BYTES_PER_TOKEN, requestCost } from '../../src/http/plugins/rate-limit.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// The rate limit counts what requests cost, not only how many: a request takes a token and one more for each 16 KiB
// of its body, so a key sending large bodies spends its minute sooner, and other keys go on as before.

forEachDialect('the rate limit by cost', (dialect) => {
  let h: Harness;
  before(async () => {
    h = await startHarness(dialect, { RATE_LIMIT_PER_MINUTE: 100 });
  });
  after(() => h.close());

  test('420 KB updates cost 26 tokens each: the fourth in a minute is a 429, while another key is served', async () => {
    const heavy = await h.key('heavy');
    const light = await h.key('light');
    const t = (await h.call('POST', '/v1/templates', { key: heavy, body: templateBody() })).body;
    const big = (i: number) => ({ env: Object.fromEntries(Array.from({ length: 14 }, (_, k) => [`V${k}`, String(i).repeat(30_000)])) });
    assert.equal(1 + Math.floor(Buffer.byteLength(JSON.stringify(big(0))) / BODY_BYTES_PER_TOKEN), 26);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await h.call('PATCH', `/v1/templates/${t.id}`, { key: heavy, body: big(i) })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const refused = await h.call('PATCH', `/v1/templates/${t.id}`, { key: heavy, body: big(9) });
    assert.equal(refused.status, 429);
    assert.match(refused.body.detail, /one more per 16 KiB of its body/);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    for (let i = 0; i < 20; i++) assert.equal((await h.call('GET', '/v1/me', { key: light })).status, 200);
  });

  test('a body whose length is not declared (chunked) counts as the largest a body may be', () => {
    assert.equal(requestCost({ method: 'POST', headers: { 'transfer-encoding': 'chunked' } }), 65);
    assert.equal(requestCost({ method: 'POST', headers: { 'content-length': String(BODY_BYTES_PER_TOKEN * 2 - 1) } }), 2);
    assert.equal(requestCost({ method: 'GET', headers: {} }), 1);
  });
});
