import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { forEachDialect, type Harness, registryAuth, startHarness, templateBody } from '../support/harness.ts';

// Container registry auths: the resource, templates that may name only their owner's, what non-owners see, the 409 on
// delete, and the platform reading credentials back.

const s = (n: number, c = 'a') => c.repeat(n);

forEachDialect('container registry auths', (dialect) => {
  let h: Harness;
  let alice: string;
  let bob: string;
  let platform: string;
  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    bob = await h.key('bob');
    platform = await h.key('ops', 'platform');
  });
  after(() => h.close());

  const create = (body: unknown, key = alice) => h.call('POST', '/v1/containerregistryauth', { key, body });
  const template = async (overrides: Record<string, unknown> = {}, key = alice) => {
    const r = await h.call('POST', '/v1/templates', { key, body: templateBody(overrides) });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };

  test('create answers id, name and createdAt, never the password; GET and the list the same', async () => {
    const r = await create({ name: '  ghcr  ', username: 'octocat', password: 'ghp_s3cret-create' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body), ['id', 'name', 'createdAt']);
    assert.match(r.body.id, /^[0-9a-z]{16}$/);
    assert.equal(r.body.name, 'ghcr');
    assert.ok(Math.abs(Date.parse(r.body.createdAt) - Date.now()) < 60_000);
    assert.equal(r.headers.location, `/v1/containerregistryauth/${r.body.id}`);
    const got = await h.call('GET', `/v1/containerregistryauth/${r.body.id}`, { key: alice });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, r.body);
    const listed = await h.call('GET', '/v1/containerregistryauth', { key: alice });
    assert.deepEqual(listed.body[0], r.body);
    for (const text of [r.text, got.text, listed.text]) {
      assert.doesNotMatch(text, /s3cret|octocat|password|username/);
    }
  });

  test('names are unique per owner (409 naming /name); another account may use the same name', async () => {
    assert.equal((await create({ name: 'dup', username: 'u', password: 'p' })).status, 200);
    const again = await create({ name: 'dup', username: 'u2', password: 'p2' });
    assert.equal(again.status, 409);
    assert.deepEqual(again.body.errors, [{ in: 'body', path: '/name', message: 'is already the name of another of your registry auths' }]);
    assert.equal((await create({ name: 'dup', username: 'u', password: 'p' }, bob)).status, 200);
  });

  const cases: [string, unknown, boolean][] = [
    ['name', '', false],
    ['name', '   ', false],
    ['name', s(255), true],
    ['name', s(256), false],
    ['name', 'tab\there', false],
    ['name', 7, false],
    ['username', '', false],
    ['username', s(255), true],
    ['username', s(256), false],
    ['username', 'new\nline', false],
    ['username', '_json_key', true],
    ['password', '', false],
    ['password', s(16384), true],
    ['password', s(16385), false],
    // Characters, as JSON Schema counts them (code points), whatever their size in UTF-8.
    ['password', '😀'.repeat(16384), true],
    ['password', '😀'.repeat(16385), false],
    ['password', 'nul\u0000', false],
    ['password', '{\n  "type": "service_account"\n}\n', true],
    ['password', null, false],
  ];
  for (const [field, value, accepted] of cases) {
    const shown = JSON.stringify(value)?.slice(0, 30);
    test(`${field} = ${shown} is ${accepted ? 'accepted' : 'refused, naming the field'}`, async () => {
      const body = { name: `bounds ${Math.random()}`, username: 'user', password: 'password', [field]: value };
      const r = await create(body);
      if (accepted) assert.equal(r.status, 200, r.text);
      else {
        assert.equal(r.status, 400, r.text);
        assert.deepEqual(
          r.body.errors.map((e: { path: string }) => e.path),
          [`/${field}`],
        );
        assert.match(r.body.detail, new RegExp(field));
      }
    });
  }

  test('missing and unknown fields are refused by name', async () => {
    const r = await create({ name: 'x', extra: 1 });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors.map((e: { path: string }) => e.path).sort(), ['/extra', '/password', '/username']);
  });

  test('each account sees its own only: the list, GET (404 for anybody else’s), paged with a Link header', async () => {
    const carol = await h.key('carol');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.unshift((await create({ name: `c${i}`, username: 'u', password: 'p' }, carol)).body.id);
    const first = await h.call('GET', '/v1/containerregistryauth?limit=2', { key: carol });
    assert.deepEqual(
      first.body.map((a: { id: string }) => a.id),
      ids.slice(0, 2),
    );
    const next = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link))?.[1] as string;
    const second = await h.call('GET', next, { key: carol });
    assert.deepEqual(
      second.body.map((a: { id: string }) => a.id),
      ids.slice(2),
    );
    assert.equal(second.headers.link, undefined);
    const others = await h.call('GET', '/v1/containerregistryauth', { key: bob });
    assert.ok(others.body.every((a: { id: string }) => !ids.includes(a.id)));
    const missing = await h.call('GET', '/v1/containerregistryauth/nosuchauth000000', { key: carol });
    const foreign = await h.call('GET', `/v1/containerregistryauth/${ids[0]}`, { key: bob });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, missing.body);
    assert.equal((await h.call('GET', `/v1/containerregistryauth/${ids[0]}`, { key: platform })).status, 404, 'not even the platform’s');
    assert.equal((await h.call('GET', '/v1/containerregistryauth/bad id!', { key: carol })).status, 400);
    assert.equal((await h.call('GET', '/v1/containerregistryauth')).status, 401);
  });

  test('credentials: platform keys read them (no-store); users get 403 whatever the id; 404 for none', async () => {
    const id = (await create({ name: 'creds', username: 'robot$acme', password: 'p@ss\nword "quoted"' })).body.id;
    const r = await h.call('GET', `/v1/containerregistryauth/${id}/credentials`, { key: platform });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { username: 'robot$acme', password: 'p@ss\nword "quoted"' });
    assert.equal(r.headers['cache-control'], 'no-store');
    for (const [key, target] of [
      [alice, id],
      [bob, id],
      [alice, 'nosuchauth000000'],
    ] as const) {
      const refused = await h.call('GET', `/v1/containerregistryauth/${target}/credentials`, { key });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.type, 'https://podplate.dev/problems/forbidden');
    }
    assert.equal((await h.call('GET', '/v1/containerregistryauth/nosuchauth000000/credentials', { key: platform })).status, 404);
  });

  test('a template may name only its owner’s auth: the same 400 for somebody else’s and for none, on create and update', async () => {
    const mine = await registryAuth(h, alice);
    const bobs = await registryAuth(h, bob);
    const t = await template({ containerRegistryAuthId: mine });
    assert.equal(t.containerRegistryAuthId, mine);
    const answers = [];
    for (const id of [bobs, 'nosuchauth000000']) {
      const created = await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ containerRegistryAuthId: id }) });
      const updated = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { containerRegistryAuthId: id } });
      assert.equal(created.status, 400);
      assert.equal(updated.status, 400);
      assert.deepEqual(created.body, updated.body);
      answers.push(created.body);
    }
    assert.deepEqual(answers[0], answers[1], 'nothing tells whether the id exists');
    assert.deepEqual(answers[0].errors, [
      { in: 'body', path: '/containerRegistryAuthId', message: 'is not the id of a registry auth of yours; "" for none' },
    ]);
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.revision, 1, 'the refused update changed nothing');
    // The platform's keys are held to the same rule: official templates name the platform's own auths.
    const official = await h.call('POST', '/v1/templates', { key: platform, body: templateBody({ containerRegistryAuthId: mine }) });
    assert.equal(official.status, 400);
  });

  test('a rollback to a revision whose auth is gone is refused the same way', async () => {
    const auth = await registryAuth(h, alice);
    const t = await template({ containerRegistryAuthId: auth });
    assert.equal((await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { containerRegistryAuthId: '' } })).status, 200);
    assert.equal((await h.call('DELETE', `/v1/containerregistryauth/${auth}`, { key: alice })).status, 204);
    const r = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 } });
    assert.equal(r.status, 400);
    assert.equal(r.body.errors[0].path, '/containerRegistryAuthId');
  });

  test('GET and the list show the id to the owner and to platform keys, "" to anybody else, byte for byte', async () => {
    const auth = await registryAuth(h, alice);
    const withAuth = await template({ name: `with auth ${auth}`, isPublic: true, containerRegistryAuthId: auth });
    const without = await template({ name: `without auth ${auth}`, isPublic: true });
    const viewers = [
      ['owner', alice, true],
      ['another user', bob, false],
      ['a platform key', platform, true],
    ] as const;
    const ownText = (await h.call('GET', `/v1/templates/${withAuth.id}`, { key: alice })).text;
    const blanked = ownText.replace(`"containerRegistryAuthId":"${auth}"`, '"containerRegistryAuthId":""');
    assert.notEqual(blanked, ownText);
    for (const [who, key, sees] of viewers) {
      const one = await h.call('GET', `/v1/templates/${withAuth.id}?includePublicTemplates=true`, { key });
      assert.equal(one.status, 200, who);
      assert.equal(one.text, sees ? ownText : blanked, who);
      assert.equal(one.headers.etag, '"r1"', who);
      const plain = await h.call('GET', `/v1/templates/${without.id}?includePublicTemplates=true`, { key });
      assert.equal(plain.body.containerRegistryAuthId, '', who);
      assert.deepEqual(plain.body, without, who);
      const list = await h.call('GET', `/v1/templates?includePublicTemplates=true&q=${encodeURIComponent(auth)}`, { key });
      // A list item is the same bytes, with its owner's name added last.
      const listed = (text: string) => `${text.slice(0, -1)},"ownerName":"alice"}`;
      assert.equal(list.text, `[${listed(plain.text)},${listed(one.text)}]`, `${who}: the list page holds the same bytes`);
    }
  });

  test('deleting an auth a template uses is a 409 naming the template; once unused, 204; then 404', async () => {
    const auth = await registryAuth(h, alice);
    const t = await template({ name: 'uses it', containerRegistryAuthId: auth });
    const refused = await h.call('DELETE', `/v1/containerregistryauth/${auth}`, { key: alice });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, new RegExp(`${t.id} \\("uses it"\\)`));
    assert.equal((await h.call('DELETE', `/v1/containerregistryauth/${auth}`, { key: bob })).status, 404, 'not bob’s');
    assert.equal((await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { containerRegistryAuthId: null } })).status, 200);
    assert.equal((await h.call('DELETE', `/v1/containerregistryauth/${auth}`, { key: alice })).status, 204);
    assert.equal((await h.call('DELETE', `/v1/containerregistryauth/${auth}`, { key: alice })).status, 404);
    assert.equal((await h.call('GET', `/v1/containerregistryauth/${auth}`, { key: alice })).status, 404);
    // A deleted template no longer holds it either.
    const other = await registryAuth(h, alice);
    const gone = await template({ containerRegistryAuthId: other });
    assert.equal((await h.call('DELETE', `/v1/templates/${gone.id}`, { key: alice })).status, 204);
    assert.equal((await h.call('DELETE', `/v1/containerregistryauth/${other}`, { key: alice })).status, 204);
  });

  test('a row from before registry auths keeps its value until its next update, which must then name an auth or ""', async () => {
    const t = await template({ name: 'legacy', isPublic: true });
    const raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
    try {
      await sql`update templates set container_registry_auth_id = 'set-before-registry-auths' where id = ${t.id}`.execute(raw);
    } finally {
      await raw.destroy();
    }
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.containerRegistryAuthId, 'set-before-registry-auths');
    const seen = await h.call('GET', `/v1/templates/${t.id}?includePublicTemplates=true`, { key: bob });
    assert.equal(seen.body.containerRegistryAuthId, '');
    const refused = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'changed' } });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.errors[0].path, '/containerRegistryAuthId');
    const fixed = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'changed', containerRegistryAuthId: '' } });
    assert.equal(fixed.status, 200);
    assert.equal(fixed.body.containerRegistryAuthId, '');
  });

  test('setting an auth on a template while it is deleted: never a template pointing at nothing', async () => {
    for (let round = 0; round < 30; round++) {
      const auth = await registryAuth(h, alice);
      const t = await template();
      const [update, remove] = await Promise.all([
        h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { containerRegistryAuthId: auth } }),
        h.call('DELETE', `/v1/containerregistryauth/${auth}`, { key: alice }),
      ]);
      const outcome = `${update.status}/${remove.status}`;
      assert.ok(outcome === '200/409' || outcome === '400/204', `round ${round}: ${outcome}`);
      const now = (await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.containerRegistryAuthId;
      const exists = (await h.call('GET', `/v1/containerregistryauth/${auth}`, { key: alice })).status === 200;
      assert.equal(now === auth, exists, `round ${round}: the template names the auth exactly when it exists`);
    }
  });

  test("a row naming another account's auth (written around the API) gets no credentials, and doesn't stop its owner deleting it", async () => {
    const auth = await registryAuth(h, alice, 'alice only');
    const bobs = await template({}, bob);
    const raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
    try {
      await sql`update templates set container_registry_auth_id = ${auth} where id = ${bobs.id}`.execute(raw);
    } finally {
      await raw.destroy();
    }
    const resolved = await h.call('POST', `/v1/templates/${bobs.id}/resolve`, { key: platform, body: { account: 'bob' } });
    assert.equal(resolved.status, 200, resolved.text);
    assert.equal(resolved.body.containerRegistryCredentials, null, "bob's template never hands out alice's password");
    assert.equal((await h.call('DELETE', `/v1/containerregistryauth/${auth}`, { key: alice })).status, 204);
    assert.equal((await h.call('GET', `/v1/templates/${bobs.id}`, { key: bob })).body.containerRegistryAuthId, '');
  });
});
