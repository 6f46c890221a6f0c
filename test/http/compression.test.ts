import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';

// Response compression, seen from a client: br or gzip as Accept-Encoding prefers, for answers of a kilobyte or more,
// streamed pages of large templates included; small answers and clients that ask for none get the plain bytes.

const decode = (encoding: string | undefined, bytes: Buffer) =>
  encoding === 'gzip' ? gunzipSync(bytes) : encoding === 'br' ? brotliDecompressSync(bytes) : bytes;

forEachDialect('response compression', (dialect) => {
  let h: Harness;
  let alice: string;
  let small: string;

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    for (let i = 0; i < 30; i++)
      await h.call('POST', '/v1/templates', {
        key: alice,
        body: { name: `t${i}`, imageName: 'ubuntu', readme: `# t${i}\n${'cuda '.repeat(60)}` },
      });
    small = (await h.call('POST', '/v1/templates', { key: alice, body: { name: 'small', imageName: 'ubuntu' } })).body.id;
  });
  after(() => h.close());

  const get = (url: string, acceptEncoding?: string, method: 'GET' | 'HEAD' = 'GET', headers: Record<string, string> = {}) =>
    h.app.inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${alice}`,
        ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }),
        ...headers,
      },
    });

  test('a list page is sent br or gzip as Accept-Encoding prefers, with Vary, and reads back as the plain page', async () => {
    const plain = await get('/v1/templates');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(plain.rawPayload.length > 10_000);
    for (const [accept, expected] of [
      ['gzip', 'gzip'],
      ['br', 'br'],
      ['gzip, deflate, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['*', 'gzip'],
    ] as const) {
      const r = await get('/v1/templates', accept);
      assert.equal(r.statusCode, 200, accept);
      assert.equal(r.headers['content-encoding'], expected, accept);
      assert.match(String(r.headers.vary), /accept-encoding/i, accept);
      assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
      assert.ok(r.rawPayload.length < plain.rawPayload.length / 5, `${accept}: ${r.rawPayload.length} of ${plain.rawPayload.length} bytes`);
      assert.deepEqual(decode(expected, r.rawPayload), plain.rawPayload, accept);
    }
  });

  test('no Accept-Encoding, identity, or only codings we do not send: the plain bytes', async () => {
    for (const accept of [undefined, 'identity', 'deflate', 'compress', 'gzip;q=0, br;q=0']) {
      const r = await get('/v1/templates', accept);
      assert.equal(r.statusCode, 200, accept);
      assert.equal(r.headers['content-encoding'], undefined, accept);
      assert.ok(Array.isArray(JSON.parse(r.body)), accept);
    }
  });

  test('answers under a kilobyte are never compressed: a template, a problem, a 304', async () => {
    const template = await get(`/v1/templates/${small}`, 'gzip, br');
    assert.equal(template.statusCode, 200);
    assert.ok(template.rawPayload.length < 1024);
    assert.equal(template.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(template.body).id, small);
    const missing = await get('/v1/templates/nosuchtemplate', 'gzip, br');
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(missing.body).status, 404);
    const notModified = await get(`/v1/templates/${small}`, 'gzip, br', 'GET', { 'if-none-match': '"r1"' });
    assert.equal(notModified.statusCode, 304);
    assert.equal(notModified.headers['content-encoding'], undefined);
    assert.equal(notModified.rawPayload.length, 0);
  });

  test('a compressed template keeps its ETag; If-None-Match and HEAD work the same compressed or not', async () => {
    const big = (
      await h.call('POST', '/v1/templates', { key: alice, body: { name: 'big', imageName: 'ubuntu', readme: 'x'.repeat(5000) } })
    ).body;
    const plain = await get(`/v1/templates/${big.id}`);
    const zipped = await get(`/v1/templates/${big.id}`, 'gzip');
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.etag, plain.headers.etag);
    assert.deepEqual(gunzipSync(zipped.rawPayload), plain.rawPayload);
    assert.equal((await get(`/v1/templates/${big.id}`, 'gzip', 'GET', { 'if-none-match': String(plain.headers.etag) })).statusCode, 304);
    const head = await get(`/v1/templates/${big.id}`, 'gzip', 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.rawPayload.length, 0);
  });

  test('a page streamed item by item (over a million characters) is compressed as it is written', async () => {
    const other = await h.key('bulky');
    for (let i = 0; i < 12; i++)
      await h.call('POST', '/v1/templates', {
        key: other,
        body: { name: `bulky ${i}`, imageName: 'ubuntu', readme: `${i} ${'lorem ipsum dolor sit amet '.repeat(3700)}` },
      });
    const get = (accept?: string) =>
      h.app.inject({
        method: 'GET',
        url: '/v1/templates',
        headers: { authorization: `Bearer ${other}`, ...(accept ? { 'accept-encoding': accept } : {}) },
      });
    const plain = await get();
    assert.ok(plain.rawPayload.length > 1 << 20, `${plain.rawPayload.length} bytes: streamed`);
    assert.equal(plain.headers['content-length'], undefined, 'streamed: no length known up front');
    for (const encoding of ['gzip', 'br']) {
      const r = await get(encoding);
      assert.equal(r.headers['content-encoding'], encoding);
      assert.ok(r.rawPayload.length < plain.rawPayload.length / 50, `${encoding}: ${r.rawPayload.length} bytes`);
      assert.deepEqual(decode(encoding, r.rawPayload), plain.rawPayload, encoding);
    }
  });
});
