import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';

// Cross-origin requests, as a browser makes them: a preflight (OPTIONS with Origin and Access-Control-Request-*),
// then the request with Origin. CORS_ORIGINS lists who may; by default nobody gets an Access-Control-* answer.

const CONSOLE = 'https://console.example.com';
const preflight = (origin: string, method = 'PATCH', headers = 'authorization, content-type, if-match') => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': headers,
});
const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((name) => name.startsWith('access-control-'));

forEachDialect('CORS', (dialect) => {
  let closed: Harness;
  let open: Harness;
  let key: string;
  let id: string;

  before(async () => {
    closed = await startHarness(dialect);
    open = await startHarness(dialect, { CORS_ORIGINS: `${CONSOLE}, http://localhost:5173` });
    key = await open.key('alice');
    id = (await open.call('POST', '/v1/templates', { key, body: { name: 'from a console', imageName: 'ubuntu' } })).body.id;
  });
  after(async () => {
    await closed.close();
    await open.close();
  });

  test('by default a preflight from another origin is answered as any OPTIONS is: 204 with Allow, no Access-Control-*', async () => {
    const r = await closed.call('OPTIONS', '/v1/templates/abc', { headers: preflight(CONSOLE) });
    assert.equal(r.status, 204);
    assert.equal(r.headers.allow, 'GET, HEAD, DELETE, PATCH, OPTIONS');
    assert.deepEqual(corsHeaders(r.headers), []);
    const get = await closed.call('GET', '/v1/templates', { headers: { origin: CONSOLE } });
    assert.deepEqual(corsHeaders(get.headers), []);
  });

  test("a listed origin's preflight gets what a browser needs: the origin, methods, headers, how long to keep it; no credentials", async () => {
    const r = await open.call('OPTIONS', `/v1/templates/${id}`, { headers: preflight(CONSOLE) });
    assert.equal(r.status, 204);
    assert.equal(r.headers['access-control-allow-origin'], CONSOLE);
    assert.equal(r.headers['access-control-allow-methods'], 'GET, HEAD, POST, PUT, PATCH, DELETE');
    assert.equal(
      r.headers['access-control-allow-headers'],
      'authorization, content-type, if-match, if-none-match, idempotency-key, x-request-id',
    );
    assert.equal(r.headers['access-control-max-age'], '600');
    assert.equal(r.headers['access-control-allow-credentials'], undefined);
    assert.match(String(r.headers.vary), /origin/i);
    // The second listed origin too, and a preflight needs no key.
    const other = await open.call('OPTIONS', '/v1/templates', { headers: preflight('http://localhost:5173', 'POST') });
    assert.equal(other.headers['access-control-allow-origin'], 'http://localhost:5173');
  });

  test("a listed origin's requests carry Access-Control-Allow-Origin and expose the headers a client reads, refusals included", async () => {
    const r = await open.call('GET', `/v1/templates/${id}`, { key, headers: { origin: CONSOLE } });
    assert.equal(r.status, 200);
    assert.equal(r.headers['access-control-allow-origin'], CONSOLE);
    const exposed = String(r.headers['access-control-expose-headers']).split(', ');
    for (const name of [
      'etag',
      'link',
      'x-next-page',
      'location',
      'retry-after',
      'idempotent-replayed',
      'www-authenticate',
      'x-request-id',
    ])
      assert.ok(exposed.includes(name), name);
    const unauthenticated = await open.call('GET', '/v1/templates', { headers: { origin: CONSOLE } });
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.headers['access-control-allow-origin'], CONSOLE);
    const missing = await open.call('GET', '/v1/nothing-here', { key, headers: { origin: CONSOLE } });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['access-control-allow-origin'], CONSOLE);
  });

  test('another origin, or none, is answered as without CORS: no Access-Control-*, OPTIONS with Allow, 404 for no route', async () => {
    for (const origin of ['https://evil.example.com', 'https://console.example.com.evil.example', 'http://console.example.com']) {
      const pre = await open.call('OPTIONS', `/v1/templates/${id}`, { headers: preflight(origin) });
      assert.equal(pre.status, 204, origin);
      assert.equal(pre.headers.allow, 'GET, HEAD, DELETE, PATCH, OPTIONS');
      assert.deepEqual(corsHeaders(pre.headers), [], origin);
      const get = await open.call('GET', `/v1/templates/${id}`, { key, headers: { origin } });
      assert.equal(get.status, 200);
      assert.deepEqual(corsHeaders(get.headers), [], origin);
    }
    const plain = await open.call('OPTIONS', '/v1/templates');
    assert.equal(plain.status, 204);
    assert.equal(plain.headers.allow, 'GET, HEAD, POST, OPTIONS');
    assert.equal((await open.call('OPTIONS', '/nowhere')).status, 404);
  });
});

test('CORS_ORIGINS=* lets any origin call, still without credentials', async () => {
  const h = await startHarness('sqlite', { CORS_ORIGINS: '*' });
  try {
    const r = await h.call('OPTIONS', '/v1/templates', { headers: preflight('https://anywhere.example', 'POST') });
    assert.equal(r.status, 204);
    assert.equal(r.headers['access-control-allow-origin'], 'https://anywhere.example');
    assert.equal(r.headers['access-control-allow-credentials'], undefined);
  } finally {
    await h.close();
  }
});
