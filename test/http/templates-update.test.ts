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

  for (const [method, path] of [
    ['POST', '/update'],
    ['PATCH', ''],
  ] as const) {
    test(`a template read with GET, changed in one field and sent back whole is updated (${method})`, async () => {
      const t = await create({ env: { A: '1' }, ports: ['22/tcp'], isServerless: true, category: 'CPU' });
      const read = (await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body;
      const r = await h.call(method, `/v1/templates/${t.id}${path}`, { key: alice, body: { ...read, readme: 'edited' } });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { ...read, readme: 'edited', revision: 2, updatedAt: r.body.updatedAt });
      assert.deepEqual((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body, r.body);
      // Sent back again as it now is, nothing changed: no new revision.
      const again = await h.call(method, `/v1/templates/${t.id}${path}`, { key: alice, body: r.body });
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.body, r.body);
    });
  }

  test('each fixed or server-set field sent back with another value is a 400 naming it; nothing is applied', async () => {
    const t = await create();
    const other: Record<string, unknown> = {
      id: 'someotherid0000',
      category: 'AMD',
      isServerless: true,
      isPlatform: true,
      earned: 1,
      runtimeInMin: 2,
      createdAt: '2001-01-01T00:00:00.000Z',
      updatedAt: '2001-01-01T00:00:00.000Z',
    };
    for (const [field, value] of Object.entries(other)) {
      const r = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { ...t, readme: 'x', [field]: value } });
      assert.equal(r.status, 400, `${field}: ${r.text}`);
      assert.equal(r.body.errors.length, 1, r.text);
      const [error] = r.body.errors;
      assert.deepEqual([error.in, error.path], ['body', `/${field}`]);
      const rule = field === 'category' || field === 'isServerless' ? "can't be changed after the template is created" : 'is read-only';
      assert.ok(error.message.startsWith(rule), error.message);
      assert.ok(error.message.includes(JSON.stringify(t[field])), `${error.message} names the current value`);
      assert.match(r.body.detail, new RegExp(`sent back only with their current values: ${field}\\.$`));
    }
    const all = await h.call('POST', `/v1/templates/${t.id}/update`, { key: alice, body: { ...t, ...other, readme: 'x' } });
    assert.equal(all.status, 400);
    assert.deepEqual(
      all.body.errors.map((e: { path: string }) => e.path),
      ['/category', '/isServerless', '/id', '/isPlatform', '/earned', '/runtimeInMin', '/createdAt', '/updatedAt'],
    );
    assert.deepEqual((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body, t, 'nothing was applied');
  });

  test('a revision other than the current one is a 412, as a stale If-Match is', async () => {
    const t = await create();
    const read = (await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body;
    assert.equal((await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'someone else' } })).status, 200);
    for (const revision of [read.revision, 3, 99]) {
      const r = await h.call('POST', `/v1/templates/${t.id}/update`, { key: alice, body: { ...read, revision, readme: 'mine' } });
      assert.equal(r.status, 412, r.text);
      assert.equal(r.body.type, 'https://podplate.dev/problems/precondition-failed');
      assert.match(r.body.detail, new RegExp(`at revision 2, not ${revision}`));
    }
    // A stale object is refused for its revision before its other fields are compared.
    const stale = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { ...read, earned: 5, readme: 'mine' } });
    assert.equal(stale.status, 412);
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.readme, 'someone else');
    // The current revision passes, and If-Match must agree with it too.
    const current = await h.call('GET', `/v1/templates/${t.id}`, { key: alice });
    const mismatch = await h.call('PATCH', `/v1/templates/${t.id}`, {
      key: alice,
      body: { ...current.body, readme: 'mine' },
      headers: { 'if-match': '"r1"' },
    });
    assert.equal(mismatch.status, 412);
    const ok = await h.call('PATCH', `/v1/templates/${t.id}`, {
      key: alice,
      body: { ...current.body, readme: 'mine' },
      headers: { 'if-match': String(current.headers.etag) },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.revision, 3);
  });

  test('earned and runtimeInMin are compared with their values now, after usage reported in between', async () => {
    const platform = await h.key('platform-usage', 'platform');
    const t = await create();
    const read = (await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body;
    const usage = await h.call('POST', `/v1/templates/${t.id}/usage`, {
      key: platform,
      body: { usageId: `u-${t.id}`, runtimeInMin: 90, earned: 1.25 },
    });
    assert.equal(usage.status, 200, usage.text);
    assert.equal(usage.body.revision, read.revision, 'usage makes no revision');
    const stale = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { ...read, readme: 'x' } });
    assert.equal(stale.status, 400, stale.text);
    assert.deepEqual(
      stale.body.errors.map((e: { path: string; message: string }) => [e.path, e.message]),
      [
        ['/earned', 'is read-only: the server sets it; send its current value (1.25) or leave it out'],
        ['/runtimeInMin', 'is read-only: the server sets it; send its current value (90) or leave it out'],
      ],
    );
    const fresh = (await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body;
    const r = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { ...fresh, readme: 'x' } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.earned, r.body.runtimeInMin, r.body.readme], [1.25, 90, 'x']);
  });

  test('timestamps sent back are compared as instants; their type and format are still checked', async () => {
    const t = await create();
    const offset = t.createdAt.replace(/\.(\d{3})Z$/, '.$1+00:00');
    const r = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { createdAt: offset, updatedAt: t.updatedAt } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.createdAt, t.createdAt, 'the stored value keeps its own form');
    for (const [field, value] of [
      ['createdAt', 'yesterday'],
      ['earned', '0'],
      ['revision', 0],
      ['id', 5],
      ['category', 'TPU'],
    ] as const) {
      const bad = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { [field]: value } });
      assert.equal(bad.status, 400, `${field}: ${bad.text}`);
      assert.equal(bad.body.errors[0].path, `/${field}`);
    }
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
    const official = await create({ isPublic: true }, platform);
    assert.equal((await h.call('PATCH', `/v1/templates/${official.id}`, { key: alice, body: { readme: 'x' } })).status, 403);
    // A private official template is the platform's alone: to a user it does not exist.
    const hidden = await create({}, platform);
    assert.equal((await h.call('PATCH', `/v1/templates/${hidden.id}`, { key: alice, body: { readme: 'x' } })).status, 404);
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
