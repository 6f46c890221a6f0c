import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

forEachDialect('endpoint updates and GET /me', (dialect) => {
  let h: Harness;
  let alice: string;
  let bob: string;
  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    bob = await h.key('bob');
  });
  after(() => h.close());

  const template = async (overrides: Record<string, unknown> = {}, key = alice) =>
    (await h.call('POST', '/v1/templates', { key, body: templateBody({ isServerless: true, ...overrides }) })).body;
  const endpoint = async (name: string, key = alice, overrides: Record<string, unknown> = {}) => {
    const t = await template(overrides, key);
    return (await h.call('POST', '/v1/endpoints', { key, body: { name, templateId: t.id } })).body;
  };
  const patch = (id: string, body: unknown, key = alice) => h.call('PATCH', `/v1/endpoints/${id}`, { key, body });
  const releases = async (id: string) => (await h.call('GET', `/v1/endpoints/${id}/releases`, { key: alice })).body;

  test('renames and resizes: a partial update, no release, stored', async () => {
    const e = await endpoint('resize');
    const r = await patch(e.id, { name: '  resized ', workersMax: 8 });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      [r.body.name, r.body.workersMin, r.body.workersMax, r.body.version, r.body.templateId],
      ['resized', 0, 8, 1, e.templateId],
    );
    assert.notEqual(r.body.updatedAt, undefined);
    assert.deepEqual((await h.call('GET', `/v1/endpoints/${e.id}`, { key: alice })).body, r.body);
    assert.deepEqual(await releases(e.id), []);
  });

  test('an update that changes nothing writes nothing; what GET returned may be sent back', async () => {
    const e = await endpoint('same');
    const r = await patch(e.id, { ...e });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, e);
    const stale = await patch(e.id, { ...e, version: 7, id: 'other', workersMin: 1 });
    assert.equal(stale.status, 400);
    assert.deepEqual(stale.body.errors.map((x: { path: string }) => x.path).sort(), ['/id', '/version']);
    assert.deepEqual((await h.call('GET', `/v1/endpoints/${e.id}`, { key: alice })).body, e, 'nothing written');
  });

  test('rebinding: the old template is unbound, the new one bound, and a release to it starts', async () => {
    const e = await endpoint('rebind', alice, { imageName: 'alice/old:1' });
    const next = await template({ imageName: 'alice/new:2' });
    const r = await patch(e.id, { templateId: next.id });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.templateId, r.body.version], [next.id, 2]);
    assert.deepEqual((await h.call('GET', `/v1/endpoints/${e.id}`, { key: alice })).body, r.body);
    const [release] = await releases(e.id);
    assert.deepEqual([release.templateId, release.templateRevision, release.version, release.status], [next.id, 1, 2, 'pending']);
    assert.ok(
      release.diff.some((c: { field: string; to: unknown }) => c.field === 'imageName' && c.to === 'alice/new:2'),
      JSON.stringify(release.diff),
    );
    // The old template is free again (deletable), the new one bound (409 on delete).
    assert.equal((await h.call('DELETE', `/v1/templates/${next.id}`, { key: alice })).status, 409);
    assert.equal((await h.call('DELETE', `/v1/templates/${e.templateId}`, { key: alice })).status, 204);
  });

  test('rebinding: GET and the list show each template bound or not as it now is, read before or not', async () => {
    const e = await endpoint('rebind-seen');
    const next = await template();
    const seen = async (id: string, bound: boolean) =>
      (await h.call('GET', `/v1/templates/${id}${bound ? '?includeEndpointBoundTemplates=true' : ''}`, { key: alice })).status;
    // Both read first, as a client would have (the process now holds them).
    assert.deepEqual([await seen(e.templateId, false), await seen(next.id, false)], [404, 200]);
    assert.equal((await patch(e.id, { templateId: next.id })).status, 200);
    // The new template is bound: hidden without includeEndpointBoundTemplates; the old one is unbound: shown.
    assert.deepEqual([await seen(next.id, false), await seen(next.id, true)], [404, 200]);
    assert.deepEqual([await seen(e.templateId, false), await seen(e.templateId, true)], [200, 200]);
    const listed = (await h.call('GET', '/v1/templates?scope=own&limit=1000', { key: alice })).body.map((t: { id: string }) => t.id);
    assert.deepEqual([listed.includes(next.id), listed.includes(e.templateId)], [false, true]);
  });

  test('rebinding follows the rules of a create: own, Serverless, unbound', async () => {
    const e = await endpoint('rules');
    const other = await endpoint('other');
    const bound = await patch(e.id, { templateId: other.templateId });
    assert.equal(bound.status, 409);
    assert.equal(bound.body.errors[0].path, '/templateId');
    const pod = await template({ isServerless: false });
    const podAnswer = await patch(e.id, { templateId: pod.id });
    assert.equal(podAnswer.status, 400);
    assert.equal(podAnswer.body.errors[0].path, '/templateId');
    const answers = [];
    for (const id of [(await template({ isPublic: true }, bob)).id, (await template({}, bob)).id, 'nosuchtemplate00']) {
      const x = await patch(e.id, { templateId: id });
      assert.equal(x.status, 400);
      answers.push(x.body);
    }
    assert.deepEqual(answers[0], answers[1]);
    assert.deepEqual(answers[1], answers[2]);
    assert.deepEqual((await h.call('GET', `/v1/endpoints/${e.id}`, { key: alice })).body, e, 'nothing changed');
  });

  test('bad input names each field; a taken name is a 409; others get 404', async () => {
    const e = await endpoint('fields');
    await endpoint('taken');
    const bad = await patch(e.id, { name: '', workersMin: -1, extra: 1 });
    assert.equal(bad.status, 400);
    const paths = bad.body.errors.map((x: { path: string }) => x.path).sort();
    assert.deepEqual(paths, ['/extra', '/name', '/workersMin'], bad.text);
    const order = await patch(e.id, { workersMin: 5 });
    assert.equal(order.status, 400);
    assert.equal(order.body.errors[0].path, '/workersMax');
    const taken = await patch(e.id, { name: 'taken' });
    assert.equal(taken.status, 409);
    assert.equal(taken.body.errors[0].path, '/name');
    assert.equal((await patch(e.id, { name: 'mine now' }, bob)).status, 404);
    assert.equal((await patch('nosuchendpoint0', { name: 'x' })).status, 404);
    assert.equal((await h.call('PATCH', `/v1/endpoints/${e.id}`, { key: alice, body: '[]' })).status, 400);
  });

  test('GET /me: the account, its role and the key', async () => {
    const r = await h.call('GET', '/v1/me', { key: alice });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), [
      'accountId',
      'accountName',
      'isPlatform',
      'keyAccess',
      'keyCreatedAt',
      'keyExpiresAt',
      'keyId',
      'keyPrefix',
      'role',
    ]);
    assert.deepEqual([r.body.accountName, r.body.role, r.body.isPlatform, r.body.keyPrefix], ['alice', 'user', false, alice.slice(0, 7)]);
    const platform = await h.call('GET', '/v1/me', { key: await h.key('ops', 'platform') });
    assert.deepEqual([platform.body.accountName, platform.body.isPlatform], ['ops', true]);
    assert.equal((await h.call('GET', '/v1/me')).status, 401);
  });
});
