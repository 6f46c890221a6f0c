import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

forEachDialect('HTTP protocol: keys, content types, limits, problems', (dialect) => {
  let h: Harness;
  let alice: string;
  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
  });
  after(() => h.close());

  test('no, malformed, unknown or revoked key: 401 with WWW-Authenticate, before the body is looked at', async () => {
    const revokedKey = await h.key('mallory');
    const [keyInfo] = (await h.store.accounts.listKeys()).filter((k) => k.account === 'mallory');
    assert.ok(await h.store.transaction((tx) => tx.accounts.revokeKey(keyInfo?.id as string, new Date().toISOString())));
    const cases: Record<string, string | undefined> = {
      none: undefined,
      'wrong scheme': `Basic ${alice}`,
      'empty bearer': 'Bearer ',
      'unknown key': 'Bearer pp_thisKeyDoesNotExist000000000000000000000',
      revoked: `Bearer ${revokedKey}`,
      'with spaces': `Bearer ${alice} extra`,
    };
    for (const [name, authorization] of Object.entries(cases)) {
      for (const [method, url] of [
        ['GET', '/v1/templates'],
        ['POST', '/v1/templates'],
        ['GET', '/v1/templates/x'],
        ['DELETE', '/v1/endpoints/x'],
      ] as const) {
        const r = await h.call(method, url, {
          headers: authorization ? { authorization } : {},
          body: method === 'POST' ? 'not json' : undefined,
        });
        assert.equal(r.status, 401, `${name} ${method} ${url}`);
        assert.equal(r.headers['www-authenticate'], 'Bearer realm="podplate"');
        assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
        assert.equal(r.body.status, 401);
      }
    }
    const lowercase = await h.call('GET', '/v1/templates', { headers: { authorization: `bearer ${alice}` } });
    assert.equal(lowercase.status, 200);
  });

  test('a body that is not JSON is a 415; broken JSON a 400', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
      const r = await h.call('POST', '/v1/templates', { key: alice, body: 'name=x', headers: { 'content-type': type } });
      assert.equal(r.status, 415, type);
      assert.equal(r.body.type, 'https://podplate.dev/problems/unsupported-media-type');
    }
    for (const broken of ['{', '{"name": "x",}', "{'name': 'x'}", '{"name": "x"} trailing', '\u0000']) {
      const r = await h.call('POST', '/v1/templates', { key: alice, body: broken });
      assert.equal(r.status, 400, broken);
      assert.equal(r.body.errors[0].path, '');
    }
    const charset = await h.call('POST', '/v1/templates', {
      key: alice,
      body: templateBody(),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(charset.status, 200);
  });

  test('a body that is JSON but not an object is a 400 naming the body', async () => {
    for (const body of ['[]', '"text"', '42', 'null', 'true']) {
      const r = await h.call('POST', '/v1/templates', { key: alice, body });
      assert.equal(r.status, 400, body);
      assert.equal(r.body.detail, 'The request body must be a JSON object.');
    }
    const empty = await h.call('POST', '/v1/templates', { key: alice, headers: { 'content-type': 'application/json' } });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.detail, 'The request body is empty; send a JSON object.');
  });

  test('an operation that takes no body takes an empty one sent with Content-Type: application/json', async () => {
    // Clients send `Content-Type: application/json` on every request, a DELETE's and an action's included.
    const json = { 'content-type': 'application/json' };
    const t = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ name: 'empty-body' }) })).body;
    assert.equal((await h.call('POST', `/v1/templates/${t.id}/image-check`, { key: alice, headers: json })).status, 200);
    assert.equal((await h.call('DELETE', `/v1/templates/${t.id}`, { key: alice, headers: json })).status, 204);
    // An operation that takes one still says it is missing.
    const update = await h.call('POST', `/v1/templates/${t.id}/update`, { key: alice, headers: json });
    assert.equal(update.body.detail, 'The request body is empty; send a JSON object.');
  });

  test('a body over 1 MiB is a 413', async () => {
    const r = await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ readme: 'x'.repeat(1024 * 1024) }) });
    assert.equal(r.status, 413);
    assert.equal(r.body.type, 'https://podplate.dev/problems/payload-too-large');
    const env = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`V${i}`, 'x']));
    const many = await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ env }) });
    assert.equal(many.status, 400);
    assert.equal(many.body.errors[0].path, '/env');
  });

  test('a field far over its size is refused at once, naming it; the error list stays short', async () => {
    const huge = await h.call('POST', '/v1/templates', {
      key: alice,
      body: { name: 'x', imageName: 'ubuntu', dockerEntrypoint: Array(400_000).fill(0) },
    });
    assert.equal(huge.status, 400);
    assert.deepEqual(huge.body.errors, [
      { in: 'body', path: '/dockerEntrypoint', message: 'has more than 1000 items; no request needs that many' },
    ]);
    const over = await h.call('POST', '/v1/templates', {
      key: alice,
      body: { name: 'x', imageName: 'ubuntu', dockerEntrypoint: Array(900).fill('a') },
    });
    assert.deepEqual(over.body.errors, [{ in: 'body', path: '/dockerEntrypoint', message: 'must have at most 64 entries' }]);
    const manyBad = await h.call('POST', '/v1/templates', {
      key: alice,
      body: {
        name: 'x',
        imageName: 'ubuntu',
        ports: Array(64).fill(0),
        readme: 1,
        env: Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`-${i}`, 1])),
      },
    });
    assert.equal(manyBad.status, 400);
    assert.equal(manyBad.body.errors.length, 100);
    assert.ok(manyBad.text.length < 20_000);
  });

  test('junk is refused before it is parsed or validated: too many keys or items anywhere, too deep, too many unknown fields', async () => {
    const junk = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i.toString(36)}":1`).join(',')}}`;
    const wide = await h.call('POST', '/v1/templates', { key: alice, body: junk });
    assert.equal(wide.status, 400);
    assert.equal(wide.body.detail, 'The request body is wider or deeper than any request needs.');
    assert.deepEqual(wide.body.errors, [{ in: 'body', path: '', message: 'has more than 1000 keys; no request needs that many' }]);
    const env = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`V${i}`, 'a,b']));
    const update = await h.call('PATCH', '/v1/templates/nosuchtemplate0', { key: alice, body: { env } });
    assert.deepEqual(update.body.errors, [{ in: 'body', path: '/env', message: 'has more than 1000 keys; no request needs that many' }]);
    const deep = await h.call('POST', '/v1/endpoints', { key: alice, body: `{"name":${'['.repeat(40)}${']'.repeat(40)}}` });
    assert.equal(deep.status, 400);
    assert.deepEqual(deep.body.errors, [{ in: 'body', path: `/name${'/0'.repeat(31)}`, message: 'nests deeper than 32 levels' }]);
    // Wider than any schema but under the bound: the first 100 unknown fields are named, and nothing else is checked.
    const unknown = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`u${i}`, i]));
    const named = await h.call('POST', '/v1/templates', { key: alice, body: { name: 'x', imageName: 'UPPER', ...unknown } });
    assert.equal(named.status, 400);
    assert.deepEqual(
      named.body.errors,
      Array.from({ length: 100 }, (_, i) => ({ in: 'body', path: `/u${i}`, message: 'is not a known field' })),
    );
  });

  test('a URL that cannot be decoded is a 400 problem', async () => {
    const r = await h.call('GET', '/v1/templates/%E0%A4%A', { key: alice });
    assert.equal(r.status, 400);
    assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
    assert.equal(r.body.type, 'https://podplate.dev/problems/invalid-request');
  });

  test('"__proto__" as a key is refused with a 400 that says so', async () => {
    const r = await h.call('POST', '/v1/templates', { key: alice, body: '{"name":"x","imageName":"ubuntu","env":{"__proto__":"x"}}' });
    assert.equal(r.status, 400);
    assert.match(r.body.detail, /__proto__/);
    assert.deepEqual(r.body.errors, [{ in: 'body', path: '/env/__proto__', message: 'is a key that is not accepted' }]);
    const nested = await h.call('POST', '/v1/templates', {
      key: alice,
      body: '{"name":"x","imageName":"ubuntu","ports":[{"constructor":{"prototype":{}}}]}',
    });
    assert.equal(nested.status, 400);
    assert.equal(nested.body.errors[0].path, '/ports/0/constructor/prototype');
  });

  test('a body that begins with a byte order mark is read without it; "__proto__" behind one is still a 400', async () => {
    const created = await h.call('POST', '/v1/templates', { key: alice, body: '\ufeff{"name":"behind a bom","imageName":"ubuntu"}' });
    assert.equal(created.status, 200);
    assert.equal(created.body.name, 'behind a bom');
    const poisoned = await h.call('POST', '/v1/templates', {
      key: alice,
      body: '\ufeff{"name":"x","imageName":"ubuntu","env":{"__proto__":"x"}}',
    });
    assert.equal(poisoned.status, 400);
    assert.deepEqual(poisoned.body.errors, [{ in: 'body', path: '/env/__proto__', message: 'is a key that is not accepted' }]);
  });

  test('bad ids are a 400 naming the parameter; unknown routes a 404 problem', async () => {
    const r = await h.call('GET', `/v1/templates/${'x'.repeat(65)}`, { key: alice });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [{ in: 'path', path: '/templateId', message: 'is not a valid id' }]);
    const odd = await h.call('GET', '/v1/templates/a%20b', { key: alice });
    assert.equal(odd.status, 400);
    const none = await h.call('GET', '/v1/nothing-here', { key: alice });
    assert.equal(none.status, 404);
    assert.equal(none.body.type, 'https://podplate.dev/problems/not-found');
  });

  test('a known path asked with a method it does not serve is a 405 with Allow; OPTIONS answers with Allow', async () => {
    const cases: [string, string][] = [
      ['/v1/templates', 'GET, HEAD, POST, OPTIONS'],
      ['/v1/templates/x', 'GET, HEAD, DELETE, PATCH, OPTIONS'],
      ['/v1/templates/x/update', 'POST, OPTIONS'],
      ['/v1/templates/x/revisions?limit=2', 'GET, HEAD, OPTIONS'],
      ['/v1/endpoints/x/releases/y/progress', 'POST, OPTIONS'],
      ['/healthz', 'GET, HEAD, OPTIONS'],
    ];
    for (const [url, allow] of cases) {
      const path = url.split('?')[0];
      const served = allow.split(', ');
      for (const method of ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].filter((m) => !served.includes(m))) {
        // A key or none, a body or none, even one that is not JSON: the method alone decides.
        for (const options of [{ key: alice, body: {} }, {}, { body: '{', headers: { 'content-type': 'application/json' } }]) {
          const r = await h.call(method as 'PUT', url, options);
          assert.equal(r.status, 405, `${method} ${url}: ${r.text}`);
          assert.equal(r.headers.allow, allow, `${method} ${url}`);
          assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
          assert.equal(r.body.type, 'https://podplate.dev/problems/method-not-allowed');
          assert.equal(r.body.detail, `${path} does not take ${method}; it takes ${allow.replace(', OPTIONS', '')}.`);
        }
      }
      const options = await h.call('OPTIONS', url);
      assert.equal(options.status, 204, url);
      assert.equal(options.headers.allow, allow, url);
      assert.equal(options.text, '');
    }
  });

  test('an unknown path is a 404 whatever the method, OPTIONS included', async () => {
    for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS'] as const) {
      for (const url of ['/v1/nothing-here', '/v1/templates/x/y/z', '/v2/templates']) {
        const r = await h.call(method, url, { key: alice });
        assert.equal(r.status, 404, `${method} ${url}`);
        assert.equal(r.headers.allow, undefined);
        assert.equal(r.body.type, 'https://podplate.dev/problems/not-found');
      }
    }
  });

  test('every field error names the part of the request its value was in', async () => {
    const t = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody() })).body;
    const cases: [string, Parameters<Harness['call']>, { in: string; path: string }][] = [
      ['body', ['POST', '/v1/templates', { key: alice, body: { name: 'x', imageName: 'Bad' } }], { in: 'body', path: '/imageName' }],
      ['body, JSON', ['POST', '/v1/templates', { key: alice, body: '{' }], { in: 'body', path: '' }],
      [
        'body, rollback',
        ['POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 7 } }],
        { in: 'body', path: '/revision' },
      ],
      ['path', ['GET', '/v1/templates/a%20b', { key: alice }], { in: 'path', path: '/templateId' }],
      ['path, endpoint', ['GET', `/v1/endpoints/${'x'.repeat(65)}`, { key: alice }], { in: 'path', path: '/endpointId' }],
      [
        'query, flag',
        ['GET', '/v1/templates?includePublicTemplates=yes', { key: alice }],
        { in: 'query', path: '/includePublicTemplates' },
      ],
      ['query, limit', ['GET', '/v1/endpoints?limit=0', { key: alice }], { in: 'query', path: '/limit' }],
      ['query, unknown', ['GET', `/v1/templates/${t.id}?color=red`, { key: alice }], { in: 'query', path: '/color' }],
      [
        'header, If-Match',
        ['DELETE', `/v1/templates/${t.id}`, { key: alice, headers: { 'if-match': 'r1' } }],
        { in: 'header', path: '/if-match' },
      ],
      [
        'header, Idempotency-Key',
        ['POST', '/v1/templates', { key: alice, body: templateBody(), headers: { 'idempotency-key': '' } }],
        { in: 'header', path: '/idempotency-key' },
      ],
      [
        'header, Content-Type',
        ['POST', '/v1/templates', { key: alice, body: 'x', headers: { 'content-type': 'text/plain' } }],
        { in: 'header', path: '/content-type' },
      ],
    ];
    // A cursor this service did not issue, on each of the four paged lists.
    for (const url of ['/v1/templates', `/v1/templates/${t.id}/revisions`, '/v1/endpoints', '/v1/endpoints/x/releases']) {
      for (const cursor of ['zz', Buffer.from('x1').toString('base64url'), Buffer.from('p-1').toString('base64url'), '!']) {
        cases.push([`query, cursor of ${url}`, ['GET', `${url}?cursor=${cursor}`, { key: alice }], { in: 'query', path: '/cursor' }]);
      }
    }
    for (const [name, [method, url, options], expected] of cases) {
      const r = await h.call(method, url, options);
      assert.ok(r.status === 400 || r.status === 415, `${name}: ${r.status} ${r.text}`);
      assert.ok(r.body.errors.length > 0, name);
      assert.deepEqual(
        r.body.errors.map((e: { in: string; path: string }) => ({ in: e.in, path: e.path })),
        [expected],
        `${name}: ${r.text}`,
      );
    }
  });

  test('every response carries a request id; a sane given one is kept', async () => {
    const given = await h.call('GET', '/v1/templates', { key: alice, headers: { 'x-request-id': 'trace-123' } });
    assert.equal(given.headers['x-request-id'], 'trace-123');
    const made = await h.call('GET', '/v1/templates', { key: alice, headers: { 'x-request-id': 'bad id\nwith newline' } });
    assert.match(String(made.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  test('health and readiness need no key', async () => {
    assert.deepEqual((await h.call('GET', '/healthz')).body, { status: 'ok' });
    assert.deepEqual((await h.call('GET', '/readyz')).body, { status: 'ready' });
  });

  test('keys are stored only as SHA-256 digests', async () => {
    const key = await h.key('digest-check');
    const rows = await h.store.accounts.listKeys();
    const row = rows.find((k) => k.account === 'digest-check');
    assert.ok(row);
    assert.match(key, /^pp_[A-Za-z0-9_-]{43}$/);
    const principal = await h.store.accounts.findPrincipal((await import('../../src/usecases/keys.ts')).digestOf(key));
    assert.equal(principal?.accountName, 'digest-check');
    assert.notEqual(principal?.digest, key);
    assert.match(principal?.digest ?? '', /^[0-9a-f]{64}$/);
    assert.equal(JSON.stringify(rows).includes(key), false);
  });
});
