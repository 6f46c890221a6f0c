import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FIELD_CASES } from '../support/cases.ts';
import { forEachDialect, type Harness, registryAuth, startHarness, templateBody } from '../support/harness.ts';

forEachDialect('updating a template', (dialect) => {
  let h: Harness;
  let alice: string;
  let bob: string;
  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    bob = await h.key('bob');
  });
  after(() => h.close());

  const create = async (overrides: Record<string, unknown> = {}, key = alice) => {
    const r = await h.call('POST', '/v1/templates', { key, body: templateBody(overrides) });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };

  for (const [method, path] of [
    ['POST', '/update'],
    ['PATCH', ''],
  ] as const) {
    test(`${method} /v1/templates/{id}${path} changes only the given fields`, async () => {
      const auth = await registryAuth(h, alice);
      const t = await create({ env: { A: '1', B: '2' }, ports: ['22/tcp'], readme: 'old', containerRegistryAuthId: auth });
      const r = await h.call(method, `/v1/templates/${t.id}${path}`, {
        key: alice,
        body: { env: { C: '3' }, readme: 'new', volumeInGb: 0 },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { ...t, env: { C: '3' }, readme: 'new', volumeInGb: 0, revision: 2, updatedAt: r.body.updatedAt });
      assert.ok(r.body.updatedAt >= t.updatedAt);
      const stored = await h.call('GET', `/v1/templates/${t.id}`, { key: alice });
      assert.deepEqual(stored.body, r.body);
    });
  }

  test('absent fields never take the seed defaults', async () => {
    const t = await create({ containerDiskInGb: 7, volumeInGb: 3, volumeMountPath: '/data', isPublic: true, readme: 'keep' });
    const r = await h.call('POST', `/v1/templates/${t.id}/update`, { key: alice, body: { imageName: 'ubuntu:24.04' } });
    assert.equal(r.status, 200);
    assert.deepEqual(
      [r.body.containerDiskInGb, r.body.volumeInGb, r.body.volumeMountPath, r.body.isPublic, r.body.readme],
      [7, 3, '/data', true, 'keep'],
    );
  });

  test('containerRegistryAuthId null or "" clears it', async () => {
    for (const clear of [null, '']) {
      const t = await create({ containerRegistryAuthId: await registryAuth(h, alice) });
      const r = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { containerRegistryAuthId: clear } });
      assert.equal(r.status, 200);
      assert.equal(r.body.containerRegistryAuthId, '');
    }
  });

  test('an update that changes nothing makes no revision', async () => {
    const t = await create({ env: { A: '1', B: '2' } });
    for (const body of [{}, { name: t.name }, { env: { B: '2', A: '1' }, imageName: t.imageName }]) {
      const r = await h.call('POST', `/v1/templates/${t.id}/update`, { key: alice, body });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, t);
    }
  });

  test('category and isServerless are refused by name; read-only fields too', async () => {
    const t = await create();
    const r = await h.call('POST', `/v1/templates/${t.id}/update`, {
      key: alice,
      body: { category: 'AMD', isServerless: true, id: 'x', isPlatform: true, earned: 1, runtimeInMin: 2, revision: 9, readme: 'fine' },
    });
    assert.equal(r.status, 400);
    const byPath = Object.fromEntries(r.body.errors.map((e: { path: string; message: string }) => [e.path, e.message]));
    assert.match(byPath['/category'], /can't be changed/);
    assert.match(byPath['/isServerless'], /can't be changed/);
    for (const f of ['/id', '/isPlatform', '/earned', '/runtimeInMin', '/revision']) assert.match(byPath[f], /read-only/);
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.readme, '', 'nothing was applied');
  });

  test('every validation rule of create holds for update', async () => {
    const t = await create();
    for (const [field, value, accepted] of FIELD_CASES) {
      if (field === 'category' || field === 'isServerless') continue;
      const body = { [field]: field === 'name' && typeof value === 'string' && accepted ? `${value.trim().slice(0, 200)} u` : value };
      const r = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body });
      assert.equal(r.status, accepted ? 200 : 400, `${field}=${JSON.stringify(value)?.slice(0, 50)}: ${r.text.slice(0, 300)}`);
      if (!accepted) assert.ok(r.body.errors.every((e: { path: string }) => e.path.startsWith(`/${field}`)));
    }
  });

  test('renaming onto another template of the owner is a 409', async () => {
    const a = await create();
    const b = await create();
    const r = await h.call('PATCH', `/v1/templates/${b.id}`, { key: alice, body: { name: a.name } });
    assert.equal(r.status, 409);
    assert.equal(r.body.errors[0].path, '/name');
  });

  test("another account's public template: 403; private: 404; unknown: 404", async () => {
    const pub = await create({ isPublic: true });
    const priv = await create();
    const r403 = await h.call('PATCH', `/v1/templates/${pub.id}`, { key: bob, body: { readme: 'mine now' } });
    assert.equal(r403.status, 403);
    for (const id of [priv.id, 'doesnotexist0000']) {
      const r = await h.call('POST', `/v1/templates/${id}/update`, { key: bob, body: { readme: 'x' } });
      assert.equal(r.status, 404);
      assert.equal(r.body.detail, 'No template with that id is visible to this key.');
    }
    const d403 = await h.call('DELETE', `/v1/templates/${pub.id}`, { key: bob });
    assert.equal(d403.status, 403);
    assert.equal((await h.call('DELETE', `/v1/templates/${priv.id}`, { key: bob })).status, 404);
    const unchanged = await h.call('GET', `/v1/templates/${pub.id}`, { key: alice });
    assert.deepEqual(unchanged.body, pub);
  });

  test('official templates can be changed only by their platform account', async () => {
    const platform = await h.key('platform', 'platform');
    const official = await create({}, platform);
    assert.equal((await h.call('PATCH', `/v1/templates/${official.id}`, { key: alice, body: { readme: 'x' } })).status, 403);
    const r = await h.call('PATCH', `/v1/templates/${official.id}`, { key: platform, body: { readme: 'x' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.isPlatform, true);
  });

  test('concurrent updates of one template all land, each on its own revision', async () => {
    const t = await create();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { env: { [`K${i}`]: 'v' } } })),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      Array(8).fill(200),
    );
    assert.deepEqual(
      results.map((r) => r.body.revision).sort((a, b) => a - b),
      [2, 3, 4, 5, 6, 7, 8, 9],
    );
  });

  test('DELETE removes the template: 204, then 404', async () => {
    const t = await create();
    const r = await h.call('DELETE', `/v1/templates/${t.id}`, { key: alice });
    assert.equal(r.status, 204);
    assert.equal(r.text, '');
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).status, 404);
    assert.equal((await h.call('DELETE', `/v1/templates/${t.id}`, { key: alice })).status, 404);
  });
});
