import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

/** Opens a raw connection, sends `text`, and resolves with what the server sent until it closed (or `waitMs`). */
function rawExchange(port: number, text: string, waitMs: number): Promise<{ data: string; closed: boolean; socket: Socket }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let closed = false;
    socket.on('data', (chunk) => {
      data += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      resolve({ data, closed, socket });
    });
    socket.write(text);
    setTimeout(() => resolve({ data, closed, socket }), waitMs).unref();
  });
}

describe('limits on what a client can make the server do', () => {
  let h: Harness;
  let port: number;
  let key: string;
  before(async () => {
    h = await startHarness('sqlite', { HEADERS_TIMEOUT_MS: 500, REQUEST_TIMEOUT_MS: 1500 });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    port = (h.app.server.address() as { port: number }).port;
    key = await h.key('alice');
  });
  after(() => h.close());

  test('a body announced over 1 MiB is a 413 before it is sent', async () => {
    const head = `POST /v1/templates HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n{"name":`;
    const r = await rawExchange(port, head, 10_000);
    r.socket.destroy();
    assert.match(r.data, /^HTTP\/1\.1 413 /);
    assert.match(r.data, /payload-too-large/);
  });

  test('a client that never finishes its headers is cut off', async () => {
    const r = await rawExchange(port, 'GET /v1/templates HTTP/1.1\r\nHost: x\r\nX-Slow: ', 20_000);
    r.socket.destroy();
    assert.equal(r.closed, true, 'the server closed the connection');
    assert.match(r.data, /^HTTP\/1\.1 408 |^$/);
  });

  test('a client that never finishes its body is cut off', async () => {
    const head = `POST /v1/templates HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"slow"`;
    const r = await rawExchange(port, head, 20_000);
    r.socket.destroy();
    assert.equal(r.closed, true, 'the server closed the connection');
  });
});

describe('per-key rate limit', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('sqlite', { RATE_LIMIT_PER_MINUTE: 5 });
  });
  after(() => h.close());

  test('beyond the limit: 429 with Retry-After; other keys are unaffected', async () => {
    const busy = await h.key('busy');
    const calm = await h.key('calm');
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await h.call('GET', '/v1/templates', { key: busy })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
    const limited = await h.call('GET', '/v1/templates', { key: busy });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.type, 'https://podplate.dev/problems/rate-limited');
    assert.ok(Number(limited.headers['retry-after']) >= 1 && Number(limited.headers['retry-after']) <= 60);
    assert.equal((await h.call('GET', '/v1/templates', { key: calm })).status, 200);
    assert.equal((await h.call('GET', '/healthz')).status, 200, 'health checks are not limited');
  });
});

forEachDialect('races', (dialect) => {
  let h: Harness;
  before(async () => {
    h = await startHarness(dialect);
  });
  after(() => h.close());

  test('50 concurrent creates of one name: one 200, 49 409', async () => {
    const key = await h.key('racer');
    const body = templateBody();
    const replies = await Promise.all(Array.from({ length: 50 }, () => h.call('POST', '/v1/templates', { key, body })));
    const statuses = replies.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1);
    assert.equal(statuses.filter((s) => s === 409).length, 49);
    assert.equal((await h.call('GET', '/v1/templates', { key })).body.length, 1);
  });
});
