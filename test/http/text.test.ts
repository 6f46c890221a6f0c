import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { invalidUtf8Offset } from '../../src/http/plugins/text.ts';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';

// The text a request may carry (docs/reliability.md): any Unicode but NUL and lone UTF-16 surrogates, in every string
// and member name of a body, every query and path parameter and every header we read; URLs in valid percent-encoded
// UTF-8; integers in a query in decimal digits. Each refusal is a 400 naming the place, and nothing is stored.

const NUL = 'must not contain the NUL character (\\u0000)';
const SURROGATE = 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)';
const INVALID = 'https://podplate.dev/problems/invalid-request';

forEachDialect('text a request may carry', (dialect) => {
  let h: Harness;
  let alice: string;
  let platform: string;
  let own: { id: string };
  let endpoint: { id: string };
  let release: { id: string };

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    platform = await h.key('platform', 'platform');
    own = (await h.call('POST', '/v1/templates', { key: alice, body: { name: 'worker', imageName: 'ubuntu', isServerless: true } })).body;
    endpoint = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'inference', templateId: own.id } })).body;
    await h.call('PATCH', `/v1/templates/${own.id}`, { key: alice, body: { readme: 'v2' } });
    [release] = (await h.call('GET', `/v1/endpoints/${endpoint.id}/releases`, { key: alice })).body;
  });
  after(() => h.close());

  /** Everything alice's key can see, to show that refused requests changed nothing. */
  const everything = async () => ({
    templates: (await h.call('GET', '/v1/templates?includeEndpointBoundTemplates=true', { key: alice })).body,
    revisions: (await h.call('GET', `/v1/templates/${own.id}/revisions`, { key: alice })).body,
    endpoints: (await h.call('GET', '/v1/endpoints', { key: alice })).body,
    releases: (await h.call('GET', `/v1/endpoints/${endpoint.id}/releases`, { key: alice })).body,
  });

  test('a lone surrogate or NUL anywhere in a body is a 400 naming each place, values and member names alike', async () => {
    const r = await h.call('POST', '/v1/templates', {
      key: alice,
      body: '{"name":"x\\ud800y","imageName":"ubuntu","env":{"A\\u0000":"v","B":"\\udc00"},"readme":"ok \\ud83d\\ude80"}',
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, {
      type: INVALID,
      title: 'Invalid request',
      status: 400,
      detail:
        'The request holds text that is not accepted (NUL, a lone UTF-16 surrogate or bad percent-encoding): body /name, body /env/A\u0000, body /env/B.',
      errors: [
        { in: 'body', path: '/name', message: SURROGATE },
        { in: 'body', path: '/env/A\u0000', message: `is a name that ${NUL}` },
        { in: 'body', path: '/env/B', message: SURROGATE },
      ],
    });
  });

  test('a body that is not UTF-8 is a 400 naming the byte offset, never stored with U+FFFD in its place', async () => {
    const before = await everything();
    const send = async (bytes: Buffer, url = '/v1/templates', method: 'POST' | 'PATCH' = 'POST') => {
      const r = await h.app.inject({
        method,
        url,
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        payload: bytes,
      });
      return { status: r.statusCode, body: r.json() };
    };
    const body = (name: Buffer) => Buffer.concat([Buffer.from('{"name":"'), name, Buffer.from('","imageName":"ubuntu"}')]);
    const at = 12; // where the name's text begins: {"name":"caf
    // Latin-1 é, a lone continuation byte, overlong "/", an encoded surrogate, past U+10FFFF, a sequence cut short.
    for (const bad of ['e9', '80', 'c0af', 'eda080', 'f4908080', 'e282', 'ff']) {
      const r = await send(body(Buffer.concat([Buffer.from('caf'), Buffer.from(bad, 'hex'), Buffer.from('!')])));
      assert.equal(r.status, 400, bad);
      assert.deepEqual(r.body.errors, [{ in: 'body', path: '', message: `is not valid UTF-8 at byte offset ${at}` }], bad);
      assert.equal(
        r.body.detail,
        `The request body is not valid UTF-8: the byte at offset ${at} (counting from 0) does not begin a character.`,
      );
    }
    const readme = Buffer.concat([Buffer.from('{"readme":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const update = await send(readme, `/v1/templates/${own.id}`, 'PATCH');
    assert.equal(update.status, 400);
    assert.equal(update.body.errors[0].message, 'is not valid UTF-8 at byte offset 11');
    assert.deepEqual(await everything(), before);
    // Every length of UTF-8 sequence is read as sent.
    const good = await send(body(Buffer.from('café €𝄞 ok', 'utf8')));
    assert.equal(good.status, 200);
    assert.equal(good.body.name, 'café €𝄞 ok');
    await h.call('DELETE', `/v1/templates/${good.body.id}`, { key: alice });
  });

  test('every string field of every body refuses NUL and each kind of lone surrogate, and nothing changes', async () => {
    const before = await everything();
    const progress = `/v1/endpoints/${endpoint.id}/releases/${release.id}/progress`;
    const cases: [string, string, (bad: string) => unknown, string, string?][] = [
      ['POST', '/v1/templates', (x) => ({ name: `a${x}`, imageName: 'ubuntu' }), '/name'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: `ubuntu${x}` }), '/imageName'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', category: `CPU${x}` }), '/category'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', volumeMountPath: `/data${x}` }), '/volumeMountPath'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', containerRegistryAuthId: x }), '/containerRegistryAuthId'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', dockerEntrypoint: ['sh', x] }), '/dockerEntrypoint/1'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', dockerStartCmd: [`-c${x}`] }), '/dockerStartCmd/0'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', env: { A: x } }), '/env/A'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', env: { [`A${x}`]: 'v' } }), '/env/A', 'key'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', ports: [`80${x}/tcp`] }), '/ports/0'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', readme: `# Hi\n\n${x}` }), '/readme'],
      ['POST', '/v1/templates', (x) => ({ name: 'a', imageName: 'ubuntu', [`extra${x}`]: 1 }), '/extra', 'key'],
      ['PATCH', `/v1/templates/${own.id}`, (x) => ({ readme: x }), '/readme'],
      ['POST', `/v1/templates/${own.id}/update`, (x) => ({ containerRegistryAuthId: x }), '/containerRegistryAuthId'],
      ['POST', `/v1/templates/${own.id}/rollback`, (x) => ({ [`revision${x}`]: 1 }), '/revision', 'key'],
      ['POST', '/v1/endpoints', (x) => ({ name: `e${x}`, templateId: own.id }), '/name'],
      ['POST', '/v1/endpoints', (x) => ({ name: 'e', templateId: `abc${x}` }), '/templateId'],
      ['POST', `/v1/templates/${own.id}/usage`, (x) => ({ usageId: `u${x}`, runtimeInMin: 1, earned: 1 }), '/usageId'],
      ['POST', progress, (x) => ({ status: `rolling${x}`, workersUpdated: 0, workersTotal: 1 }), '/status'],
    ];
    for (const [bad, message] of [
      ['\u0000', NUL],
      ['\ud800', SURROGATE],
      ['\udbff', SURROGATE],
      ['\udc00', SURROGATE],
      ['\udfff', SURROGATE],
    ] as const) {
      for (const [method, url, body, pointer, key] of cases) {
        const path = key ? `${pointer}${bad}` : pointer;
        const what = `${method} ${url} ${JSON.stringify(body(bad))}`;
        const r = await h.call(method as 'POST', url, {
          key: url.endsWith('/usage') || url === progress ? platform : alice,
          body: body(bad),
        });
        assert.equal(r.status, 400, `${what} → ${r.status} ${r.text}`);
        assert.deepEqual(r.body.errors, [{ in: 'body', path, message: key ? `is a name that ${message}` : message }], what);
      }
    }
    assert.deepEqual(await everything(), before);
  });

  test('names that differ only in a lone surrogate are refused: on PostgreSQL both were stored as one name (U+FFFD)', async () => {
    for (const name of ['twin \ud800', 'twin \udc00']) {
      const r = await h.call('POST', '/v1/templates', { key: alice, body: { name, imageName: 'ubuntu' } });
      assert.deepEqual([r.status, r.body.errors], [400, [{ in: 'body', path: '/name', message: SURROGATE }]]);
    }
    // The replacement character itself is ordinary text, and a surrogate pair is one character.
    for (const name of ['twin \ufffd', 'twin \ud83d\ude80']) {
      const r = await h.call('POST', '/v1/templates', { key: alice, body: { name, imageName: 'ubuntu' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.name, name);
      assert.equal((await h.call('GET', `/v1/templates/${r.body.id}`, { key: alice })).body.name, name);
      assert.equal((await h.call('DELETE', `/v1/templates/${r.body.id}`, { key: alice })).status, 204);
    }
  });

  test('query parameters: NUL, bad percent-encoding, integers not in decimal and unknown names are named', async () => {
    const cases: [string, { in: string; path: string; message: string }[]][] = [
      ['/v1/templates?q=%00', [{ in: 'query', path: '/q', message: NUL }]],
      ['/v1/templates?q=a%ED%A0%80', [{ in: 'query', path: '/q', message: 'is not valid percent-encoded UTF-8' }]],
      ['/v1/templates?q=a%FFb', [{ in: 'query', path: '/q', message: 'is not valid percent-encoded UTF-8' }]],
      ['/v1/templates?cursor=%E0%A4%A', [{ in: 'query', path: '/cursor', message: 'is not valid percent-encoded UTF-8' }]],
      ['/v1/templates?%FF=1', [{ in: 'query', path: '/%FF', message: 'is a name that is not valid percent-encoded UTF-8' }]],
      ['/v1/templates?q%00=1', [{ in: 'query', path: '/q\u0000', message: `is a name that ${NUL}` }]],
      ['/v1/templates?limit=1e400', [{ in: 'query', path: '/limit', message: 'must be an integer' }]],
      ['/v1/templates?limit=-1e400', [{ in: 'query', path: '/limit', message: 'must be an integer' }]],
      ['/v1/templates?limit=0x10', [{ in: 'query', path: '/limit', message: 'must be an integer' }]],
      ['/v1/templates?limit=%205', [{ in: 'query', path: '/limit', message: 'must be an integer' }]],
      ['/v1/templates?limit=1.5', [{ in: 'query', path: '/limit', message: 'must be an integer' }]],
      ['/v1/templates?limit=1e20', [{ in: 'query', path: '/limit', message: 'must be an integer' }]],
      ['/v1/templates?limit=99999999999999999999', [{ in: 'query', path: '/limit', message: 'must be at most 1000' }]],
      [`/v1/templates/${own.id}/revisions?limit=1e400`, [{ in: 'query', path: '/limit', message: 'must be an integer' }]],
      ['/v1/endpoints?limit=Infinity', [{ in: 'query', path: '/limit', message: 'must be an integer' }]],
      [`/v1/endpoints/${endpoint.id}/releases?cursor=cDk5`, []],
      ['/v1/templates?cursor=eHl6', [{ in: 'query', path: '/cursor', message: 'is not a cursor this service issued' }]],
      [`/v1/endpoints/${endpoint.id}?x=1`, [{ in: 'query', path: '/x', message: 'is not a known field' }]],
    ];
    for (const [url, errors] of cases) {
      const r = await h.call('GET', url, { key: alice });
      if (errors.length === 0) {
        assert.equal(r.status, 200, `${url} → ${r.text}`);
        continue;
      }
      assert.equal(r.status, 400, `${url} → ${r.text}`);
      assert.equal(r.body.type, INVALID);
      assert.deepEqual(r.body.errors, errors, url);
    }
  });

  test('path parameters: a bad id is named, however it is encoded and however long it is', async () => {
    const cases: [string, string, string, string][] = [
      ['GET', '/v1/templates/%00', '/templateId', NUL],
      ['GET', '/v1/templates/a%ED%A0%80b', '/templateId', 'is not valid percent-encoded UTF-8'],
      ['GET', '/v1/templates/%FF/revisions', '/templateId', 'is not valid percent-encoded UTF-8'],
      ['DELETE', `/v1/templates/${'a'.repeat(201)}`, '/templateId', 'must be at most 200 characters'],
      ['GET', `/v1/templates/${'a'.repeat(65)}`, '/templateId', 'is not a valid id'],
      ['GET', '/v1/endpoints/%C0%AF', '/endpointId', 'is not valid percent-encoded UTF-8'],
      ['POST', `/v1/endpoints/${endpoint.id}/releases/%ED%BF%BF/progress`, '/releaseId', 'is not valid percent-encoded UTF-8'],
      ['POST', `/v1/endpoints/${endpoint.id}/releases/r%00/progress`, '/releaseId', NUL],
    ];
    for (const [method, url, path, message] of cases) {
      const r = await h.call(method as 'GET', url, { key: platform, body: method === 'POST' ? {} : undefined });
      assert.equal(r.status, 400, `${method} ${url} → ${r.text}`);
      assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
      assert.deepEqual(r.body.errors, [{ in: 'path', path, message }], url);
    }
    const r = await h.call('GET', '/v1/templates/%FF', { key: alice });
    assert.equal(r.body.detail, 'The request has invalid path parameters: templateId.');
  });

  test('headers we read: NUL in If-Match or Idempotency-Key is a 400 naming it, in Content-Type a 415, in Authorization a 401', async () => {
    const before = await everything();
    const ifMatch = await h.call('PATCH', `/v1/templates/${own.id}`, {
      key: alice,
      body: { readme: 'x' },
      headers: { 'if-match': '"r2"\u0000' },
    });
    assert.equal(ifMatch.status, 400);
    assert.deepEqual(ifMatch.body.errors, [{ in: 'header', path: '/if-match', message: 'is not a list of entity tags' }]);
    // Only spaces and tabs are white space around entity tags (RFC 9110), not other control characters.
    const verticalTab = await h.call('DELETE', `/v1/templates/${own.id}`, { key: alice, headers: { 'if-match': '"r2"\u000b' } });
    assert.equal(verticalTab.status, 400);
    const idempotency = await h.call('POST', '/v1/templates', {
      key: alice,
      body: { name: 'n', imageName: 'ubuntu' },
      headers: { 'idempotency-key': 'k\u0000' },
    });
    assert.equal(idempotency.status, 400);
    assert.deepEqual(idempotency.body.errors, [
      { in: 'header', path: '/idempotency-key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
    const type = await h.call('POST', '/v1/templates', {
      key: alice,
      body: { name: 'n', imageName: 'ubuntu' },
      headers: { 'content-type': 'application/json\u0000' },
    });
    assert.equal(type.status, 415);
    assert.deepEqual(type.body.errors, [{ in: 'header', path: '/content-type', message: 'must be application/json' }]);
    // Authentication comes first, and a malformed key is a 401 like any other key that is not one (docs/api.md).
    const auth = await h.call('GET', '/v1/templates', { headers: { authorization: `Bearer ${alice}\u0000` } });
    assert.equal(auth.status, 401);
    assert.deepEqual(await everything(), before);
  });

  test('a body nested thousands deep is refused for its depth before it is parsed; within the bound, a poisonous key or bad text deep inside is named', async () => {
    const depth = 20_000;
    for (const body of [
      `{"name":"deep","imageName":"ubuntu","env":${'{"a":'.repeat(depth)}{"__proto__":1}${'}'.repeat(depth)}}`,
      `{"name":"deep","imageName":"ubuntu","env":${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}}`,
    ]) {
      const r = await h.call('POST', '/v1/templates', { key: alice, body });
      assert.equal(r.status, 400);
      assert.equal(r.body.errors.length, 1);
      assert.equal(r.body.errors[0].message, 'nests deeper than 32 levels');
      assert.match(r.body.errors[0].path, /^\/env(\/a|\/0){31}$/);
    }
    const near = 30;
    const r = await h.call('POST', '/v1/templates', {
      key: alice,
      body: `{"name":"deep","imageName":"ubuntu","env":${'{"a":'.repeat(near)}{"__proto__":1}${'}'.repeat(near)}}`,
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [{ in: 'body', path: `/env${'/a'.repeat(near)}/__proto__`, message: 'is a key that is not accepted' }]);
    const text = await h.call('POST', '/v1/templates', {
      key: alice,
      body: `{"name":"deep","imageName":"ubuntu","env":${'['.repeat(near)}"\\ud800"${']'.repeat(near)}}`,
    });
    assert.equal(text.status, 400);
    assert.deepEqual(text.body.errors, [{ in: 'body', path: `/env${'/0'.repeat(near)}`, message: SURROGATE }]);
  });
});

test('the offset named is where the bytes stop being UTF-8: all before it is, and the sequence it begins is not', () => {
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 40 }),
    // Mostly valid text with one byte changed: the interesting cases are near the edges of multi-byte sequences.
    fc.tuple(fc.string({ unit: 'binary', maxLength: 20 }), fc.nat(), fc.integer({ min: 0, max: 255 })).map(([text, at, byte]) => {
      const b = Buffer.from(text, 'utf8');
      if (b.length > 0) b[at % b.length] = byte;
      return new Uint8Array(b);
    }),
  );
  fc.assert(
    fc.property(bytes, (b) => {
      const offset = invalidUtf8Offset(b);
      if (offset === undefined) return isUtf8(b);
      // The bytes before it are UTF-8, and no prefix that ends a character after it is.
      return isUtf8(b.subarray(0, offset)) && [1, 2, 3, 4].every((n) => !isUtf8(b.subarray(0, offset + n)) || offset + n > b.length);
    }),
    { numRuns: 20_000 },
  );
});
