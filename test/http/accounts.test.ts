import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { forEachDialect, type Harness, openHarness, startHarness, templateBody } from '../support/harness.ts';

// Accounts and keys over the API: a platform key provisions an account and its keys (a GPU cloud's sign-up, with no
// database access); a user manages its own account's keys. Keys may be read-only (every write a 403) and expire (a 401
// saying so); they are shown once, listed without the key, and revoked everywhere at once.

const FORBIDDEN = 'https://podplate.dev/problems/forbidden';
const NOT_FOUND = 'https://podplate.dev/problems/not-found';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

forEachDialect('accounts and keys over HTTP', (dialect) => {
  let h: Harness;
  let platform: string;
  before(async () => {
    h = await startHarness(dialect);
    platform = await h.key('ops', 'platform');
  });
  after(() => h.close());

  const account = (body: unknown, key = platform) => h.call('POST', '/v1/accounts', { key, body });
  const makeKey = (name: string, body: unknown, key = platform) => h.call('POST', `/v1/accounts/${name}/keys`, { key, body });
  const listKeys = (name: string, key: string) => h.call('GET', `/v1/accounts/${name}/keys`, { key });

  test('a platform key provisions an account and a read-only, expiring key; the user lists, uses and revokes it', async () => {
    const made = await account({ name: 'dana' });
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(Object.keys(made.body), ['name', 'role', 'createdAt']);
    assert.equal(made.body.name, 'dana');
    assert.equal(made.body.role, 'user');
    assert.match(made.body.createdAt, ISO);
    assert.equal(made.headers.location, '/v1/accounts/dana/keys');

    // A read-write key for the user, then (with it) a read-only one that expires.
    const full = await makeKey('dana', { label: 'laptop' });
    assert.equal(full.status, 201, full.text);
    assert.deepEqual(Object.keys(full.body).sort(), ['access', 'createdAt', 'expiresAt', 'id', 'key', 'label']);
    assert.match(full.body.key, /^pp_[A-Za-z0-9_-]{43}$/);
    assert.match(full.body.id, /^key_[0-9a-z]{16}$/);
    assert.deepEqual(
      { label: full.body.label, access: full.body.access, expiresAt: full.body.expiresAt },
      {
        label: 'laptop',
        access: 'read-write',
        expiresAt: null,
      },
    );
    assert.equal(full.headers['cache-control'], 'no-store');
    const expiresAt = inSeconds(3600);
    const read = await makeKey('dana', { label: 'dashboard', access: 'read', expiresAt }, full.body.key);
    assert.equal(read.status, 201, read.text);
    assert.equal(read.body.access, 'read');
    assert.equal(read.body.expiresAt, expiresAt);

    // The read-only key reads, and is known for what it is.
    const me = await h.call('GET', '/v1/me', { key: read.body.key });
    assert.equal(me.status, 200);
    assert.equal(me.body.accountName, 'dana');
    assert.equal(me.body.keyAccess, 'read');
    assert.equal(me.body.keyExpiresAt, expiresAt);
    assert.equal((await h.call('GET', '/v1/templates', { key: read.body.key })).status, 200);

    // Listed without the key, with when each was last used (noted outside the request, at most once a minute).
    await h.podplate.keys.usesWritten();
    const listed = await listKeys('dana', read.body.key);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.map((k: Record<string, unknown>) => Object.keys(k).sort()),
      [0, 1].map(() => ['access', 'createdAt', 'expiresAt', 'id', 'label', 'lastUsedAt']),
    );
    assert.deepEqual(
      listed.body.map((k: { id: string; label: string; access: string }) => [k.id, k.label, k.access]),
      [
        [full.body.id, 'laptop', 'read-write'],
        [read.body.id, 'dashboard', 'read'],
      ],
    );
    assert.match(listed.body[1].lastUsedAt, ISO);
    assert.equal(listed.text.includes(read.body.key), false);
    assert.equal(listed.text.includes(full.body.key), false);

    // Revoked by the user (with its read-write key): refused at once, and gone from the list.
    const revoked = await h.call('DELETE', `/v1/accounts/dana/keys/${read.body.id}`, { key: full.body.key });
    assert.equal(revoked.status, 204, revoked.text);
    const refused = await h.call('GET', '/v1/templates', { key: read.body.key });
    assert.equal(refused.status, 401);
    assert.match(refused.body.detail, /revoked/);
    assert.deepEqual(
      (await listKeys('dana', full.body.key)).body.map((k: { id: string }) => k.id),
      [full.body.id],
    );
    const again = await h.call('DELETE', `/v1/accounts/dana/keys/${read.body.id}`, { key: full.body.key });
    assert.equal(again.status, 404);
  });

  test('accounts: platform keys only (403), a name taken is a 409, a bad name or field a 400 naming it', async () => {
    const user = await h.key('erin');
    const byUser = await account({ name: 'frank' }, user);
    assert.equal(byUser.status, 403);
    assert.equal(byUser.body.type, FORBIDDEN);
    assert.equal((await account({ name: 'ops2', role: 'platform' })).body.role, 'platform');
    const taken = await account({ name: 'erin' });
    assert.equal(taken.status, 409);
    assert.deepEqual(taken.body.errors, [{ in: 'body', path: '/name', message: 'is taken' }]);
    for (const [body, path] of [
      [{ name: 'has space' }, '/name'],
      [{ name: '' }, '/name'],
      [{ name: '-dash' }, '/name'],
      [{ name: 'x'.repeat(129) }, '/name'],
      [{ name: 'gail', role: 'admin' }, '/role'],
      [{ name: 'gail', colour: 'red' }, '/colour'],
      [{}, '/name'],
    ] as const) {
      const r = await account(body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.ok(
        r.body.errors.some((e: { path: string }) => e.path === path),
        `${JSON.stringify(body)} names ${path}: ${r.text}`,
      );
    }
    assert.equal((await account({ name: 'gail' })).status, 201, 'nothing was made by the refused ones');
  });

  test("keys: a user key makes and lists its own account's only; another account, or none, is a 404", async () => {
    const hank = await h.key('hank');
    const ivy = await h.key('ivy');
    for (const r of [
      await makeKey('ivy', {}, hank),
      await listKeys('ivy', hank),
      await makeKey('nobody', {}, hank),
      await makeKey('nobody', {}),
      await listKeys('nobody', platform),
    ]) {
      assert.equal(r.status, 404, r.text);
      assert.equal(r.body.type, NOT_FOUND);
    }
    // The same answer whether the other account exists or not.
    assert.equal(
      (await makeKey('ivy', {}, hank)).body.detail.replace('ivy', 'X'),
      (await makeKey('nobody', {}, hank)).body.detail.replace('nobody', 'X'),
    );
    const ivysKeys = (await listKeys('ivy', platform)).body;
    const ivysKeyId = ivysKeys[0].id;
    // Revoking another account's key through one's own account, or through theirs: a 404, and the key still works.
    assert.equal((await h.call('DELETE', `/v1/accounts/hank/keys/${ivysKeyId}`, { key: hank })).status, 404);
    assert.equal((await h.call('DELETE', `/v1/accounts/ivy/keys/${ivysKeyId}`, { key: hank })).status, 404);
    assert.equal((await h.call('GET', '/v1/templates', { key: ivy })).status, 200);
    // A platform key manages any account's keys.
    const made = await makeKey('hank', { label: 'from the platform' });
    assert.equal(made.status, 201);
    assert.equal((await h.call('GET', '/v1/me', { key: made.body.key })).body.accountName, 'hank');
    assert.equal((await h.call('DELETE', `/v1/accounts/hank/keys/${made.body.id}`, { key: platform })).status, 204);
    // Bad input: a 400 naming each field.
    for (const [body, path] of [
      [{ expiresAt: inSeconds(-60) }, '/expiresAt'],
      [{ expiresAt: 'tomorrow' }, '/expiresAt'],
      [{ access: 'admin' }, '/access'],
      [{ label: 'a\u0007b' }, '/label'],
      [{ label: 'x'.repeat(201) }, '/label'],
      [{ owner: 'x' }, '/owner'],
    ] as const) {
      const r = await makeKey('hank', body, hank);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
      assert.deepEqual(
        r.body.errors.map((e: { path: string }) => e.path),
        [path],
      );
    }
    const badName = await makeKey('has%20space', {}, hank);
    assert.equal(badName.status, 400);
    assert.deepEqual(
      badName.body.errors.map((e: { in: string; path: string }) => [e.in, e.path]),
      [['path', '/account']],
    );
  });

  test('a key made with an Idempotency-Key is made once: a retry makes no second key and is told which key was made', async () => {
    const jill = await h.key('jill');
    const retry = { 'idempotency-key': 'make-laptop-key-1' };
    const first = await h.call('POST', '/v1/accounts/jill/keys', { key: jill, body: { label: 'laptop' }, headers: retry });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers['cache-control'], 'no-store');
    assert.match(first.body.key, /^pp_/);
    const again = await h.call('POST', '/v1/accounts/jill/keys', { key: jill, body: { label: 'laptop' }, headers: retry });
    assert.equal(again.status, 409, again.text);
    assert.match(again.body.detail, new RegExp(`made key ${first.body.id}`));
    assert.doesNotMatch(again.text, /pp_/, 'the key itself is never in a retry');
    const laptops = (await h.call('GET', '/v1/accounts/jill/keys', { key: jill })).body.filter(
      (k: { label: string }) => k.label === 'laptop',
    );
    assert.deepEqual(
      laptops.map((k: { id: string }) => k.id),
      [first.body.id],
    );
    // The same Idempotency-Key with another body is another request: refused.
    const other = await h.call('POST', '/v1/accounts/jill/keys', { key: jill, body: { label: 'phone' }, headers: retry });
    assert.equal(other.status, 422, other.text);
    // Without one, each request makes a key.
    assert.equal((await h.call('POST', '/v1/accounts/jill/keys', { key: jill, body: { label: 'laptop' } })).status, 201);
  });

  test('a key made by a user key that expires expires no later than it', async () => {
    const expiresAt = inSeconds(600);
    const parent = await makeKey('hank', { expiresAt });
    const child = await makeKey('hank', { label: 'child' }, parent.body.key);
    assert.equal(child.status, 201, child.text);
    assert.equal(child.body.expiresAt, expiresAt);
    const later = await makeKey('hank', { expiresAt: inSeconds(7200) }, parent.body.key);
    assert.equal(later.status, 400);
    assert.equal(later.body.errors[0].path, '/expiresAt');
    const sooner = await makeKey('hank', { expiresAt: inSeconds(60) }, parent.body.key);
    assert.equal(sooner.status, 201);
  });

  test('a read key gets 403 on every write: creates, updates, deletes, an idempotent replay, and making keys', async () => {
    assert.equal((await account({ name: 'judy' })).status, 201);
    const writer = (await makeKey('judy', {})).body.key as string;
    const reader = (await makeKey('judy', { access: 'read' })).body.key as string;
    const body = templateBody({ isServerless: true });
    const first = await h.call('POST', '/v1/templates', { key: writer, body, headers: { 'idempotency-key': 'once' } });
    assert.equal(first.status, 200, first.text);
    const id = first.body.id;
    const writes: [string, string, unknown, Record<string, string>?][] = [
      ['POST', '/v1/templates', body, { 'idempotency-key': 'once' }],
      ['POST', '/v1/templates', templateBody()],
      ['POST', `/v1/templates/${id}/update`, { readme: 'x' }],
      ['PATCH', `/v1/templates/${id}`, { readme: 'x' }],
      ['POST', `/v1/templates/${id}/rollback`, { revision: 1 }],
      ['DELETE', `/v1/templates/${id}`, undefined],
      ['POST', '/v1/endpoints', { name: 'e', templateId: id, workersMin: 0, workersMax: 1 }],
      ['PUT', '/v1/secrets/TOKEN', { value: 'v' }],
      ['POST', '/v1/containerregistryauth', { name: 'r', username: 'u', password: 'p' }],
      ['POST', '/v1/accounts/judy/keys', {}],
      ['POST', '/v1/accounts/judy/keys', { access: 'read' }],
      ['DELETE', '/v1/accounts/judy/keys/key_0123456789abcdef', undefined],
    ];
    for (const [method, url, payload, headers] of writes) {
      const r = await h.call(method as 'POST', url, { key: reader, body: payload, headers });
      assert.equal(r.status, 403, `${method} ${url}: ${r.text}`);
      assert.equal(r.body.type, FORBIDDEN);
      assert.match(r.body.detail, /read-only/);
      assert.equal(r.headers['idempotent-replayed'], undefined);
    }
    // Nothing was changed by any of them.
    const now = await h.call('GET', `/v1/templates/${id}`, { key: writer });
    assert.equal(now.body.revision, 1);
    assert.equal((await h.call('GET', '/v1/secrets', { key: writer })).body.length, 0);
    assert.equal((await listKeys('judy', writer)).body.length, 2);
    // Reads work: the template, its revisions, the key list.
    for (const url of [`/v1/templates/${id}`, `/v1/templates/${id}/revisions`, '/v1/accounts/judy/keys', '/v1/endpoints']) {
      assert.equal((await h.call('GET', url, { key: reader })).status, 200, url);
    }
    // A read-only platform key may resolve a template for a launch (it reads), and may not make an account.
    const platformReader = (await makeKey('ops', { access: 'read' })).body.key as string;
    const resolved = await h.call('POST', `/v1/templates/${id}/resolve`, { key: platformReader, body: { account: 'judy' } });
    assert.equal(resolved.status, 200, resolved.text);
    assert.equal((await account({ name: 'kim' }, platformReader)).status, 403);
  });

  test('a key label that would reorder the text around it (a bidi override or isolate) is a 400 naming the label', async () => {
    await account({ name: 'rtl' });
    for (const label of ['evil\u202eexe.pdf', 'a\u2066b', 'tab\there']) {
      const r = await makeKey('rtl', { label });
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(
        r.body.errors.map((e: { path: string }) => e.path),
        ['/label'],
      );
    }
    assert.equal((await makeKey('rtl', { label: 'laptop — عربي' })).status, 201, 'right-to-left letters themselves are fine');
  });

  test('an expired key is a 401 whose problem says it expired', async () => {
    await account({ name: 'lee' });
    const expiresAt = inSeconds(1.5);
    const key = (await makeKey('lee', { expiresAt })).body.key as string;
    assert.equal((await h.call('GET', '/v1/me', { key })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const refused = await h.call('GET', '/v1/me', { key });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['www-authenticate'], 'Bearer realm="podplate"');
    assert.equal(refused.body.type, 'https://podplate.dev/problems/unauthenticated');
    assert.equal(refused.body.detail, `The API key expired at ${expiresAt}; ask for a new one.`);
    // Still listed (it is not revoked), with its expiry in the past.
    const listed = (await listKeys('lee', platform)).body;
    assert.equal(listed[0].expiresAt, expiresAt);
  });

  test('a key revoked over the API is refused by another process on the same database within a second', async () => {
    await account({ name: 'max' });
    const key = (await makeKey('max', {})).body;
    const other = await openHarness(h.database);
    try {
      const before = await other.call('GET', '/v1/me', { key: key.key });
      assert.equal(before.status, 200, before.text);
      const revoked = await h.call('DELETE', `/v1/accounts/max/keys/${key.id}`, { key: platform });
      assert.equal(revoked.status, 204, revoked.text);
      await eventually('the other process refuses the revoked key', 1000, async () => {
        return (await other.call('GET', '/v1/me', { key: key.key })).status === 401;
      });
    } finally {
      await other.app.close();
      await other.store.close();
    }
  });
});
