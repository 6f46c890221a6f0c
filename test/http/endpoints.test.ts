import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

forEachDialect('endpoints and binding', (dialect) => {
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

  test('binds a Serverless template of the caller; defaults and fields', async () => {
    const t = await template();
    const r = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: ' inference ', templateId: t.id } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), [
      'createdAt',
      'id',
      'name',
      'templateId',
      'updatedAt',
      'version',
      'workersMax',
      'workersMin',
    ]);
    assert.deepEqual([r.body.name, r.body.templateId, r.body.workersMin, r.body.workersMax, r.body.version], ['inference', t.id, 0, 3, 1]);
    assert.equal(r.headers.location, `/v1/endpoints/${r.body.id}`);
    assert.deepEqual((await h.call('GET', `/v1/endpoints/${r.body.id}`, { key: alice })).body, r.body);
    const list = await h.call('GET', '/v1/endpoints', { key: alice });
    assert.deepEqual(
      list.body.map((e: { id: string }) => e.id),
      [r.body.id],
    );
  });

  test('a template is bound to one endpoint at a time: 409', async () => {
    const t = await template();
    assert.equal((await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'one', templateId: t.id } })).status, 200);
    const again = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'two', templateId: t.id } });
    assert.equal(again.status, 409);
    assert.equal(again.body.errors[0].path, '/templateId');
  });

  test("a Pod template is a 400; another account's template, public or not, is a 400 that reveals nothing", async () => {
    const pod = await template({ isServerless: false });
    const r = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'pod', templateId: pod.id } });
    assert.equal(r.status, 400);
    assert.equal(r.body.errors[0].path, '/templateId');
    const bobsPublic = await template({ isPublic: true }, bob);
    const bobsPrivate = await template({}, bob);
    const answers = [];
    for (const id of [bobsPublic.id, bobsPrivate.id, 'nosuchtemplate00']) {
      const x = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: `x ${id}`, templateId: id } });
      assert.equal(x.status, 400);
      answers.push(x.body);
    }
    assert.deepEqual(answers[0], answers[1]);
    assert.deepEqual(answers[1], answers[2]);
  });

  test('worker bounds; endpoint names unique per owner', async () => {
    const t = await template();
    const bad = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'w', templateId: t.id, workersMin: 5, workersMax: 2 } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/workersMax');
    for (const body of [{ workersMin: -1 }, { workersMax: 0 }, { workersMax: 1001 }, { workersMin: 'two' }, { extra: 1 }]) {
      const r = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'w', templateId: t.id, ...body } });
      assert.equal(r.status, 400, JSON.stringify(body));
    }
    assert.equal((await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'same', templateId: t.id } })).status, 200);
    const t2 = await template();
    const dup = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'same', templateId: t2.id } });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.errors[0].path, '/name');
    assert.equal((await h.call('GET', `/v1/templates/${t2.id}`, { key: alice })).status, 200, 'a failed bind leaves the template unbound');
  });

  test('a bound template cannot be deleted (409) until its endpoint is; others cannot see endpoints', async () => {
    const t = await template();
    const e = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'del', templateId: t.id } })).body;
    assert.equal((await h.call('DELETE', `/v1/templates/${t.id}`, { key: alice })).status, 409);
    assert.equal((await h.call('GET', `/v1/endpoints/${e.id}`, { key: bob })).status, 404);
    assert.equal((await h.call('DELETE', `/v1/endpoints/${e.id}`, { key: bob })).status, 404);
    assert.equal((await h.call('DELETE', `/v1/endpoints/${e.id}`, { key: alice })).status, 204);
    assert.equal((await h.call('GET', `/v1/endpoints/${e.id}`, { key: alice })).status, 404);
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).status, 200, 'unbound again');
    assert.equal((await h.call('DELETE', `/v1/templates/${t.id}`, { key: alice })).status, 204);
  });

  test('endpoints page with a Link header', async () => {
    const carol = await h.key('carol');
    for (let i = 0; i < 3; i++) {
      const t = await template({}, carol);
      await h.call('POST', '/v1/endpoints', { key: carol, body: { name: `p${i}`, templateId: t.id } });
    }
    const first = await h.call('GET', '/v1/endpoints?limit=2', { key: carol });
    assert.equal(first.body.length, 2);
    const next = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link))?.[1] as string;
    const second = await h.call('GET', next, { key: carol });
    assert.deepEqual(
      second.body.map((e: { name: string }) => e.name),
      ['p0'],
    );
    assert.equal(second.headers.link, undefined);
  });
});
