import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

forEachDialect('rolling releases', (dialect) => {
  let h: Harness;
  let alice: string;
  let bob: string;
  let platform: string;
  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    bob = await h.key('bob');
    platform = await h.key('platform', 'platform');
  });
  after(() => h.close());

  const boundTemplate = async () => {
    const t = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ isServerless: true }) })).body;
    const e = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: `ep-${t.id}`, templateId: t.id } })).body;
    return { t, e };
  };
  const releases = async (endpointId: string, key = alice) => (await h.call('GET', `/v1/endpoints/${endpointId}/releases`, { key })).body;

  test('a change to a bound template starts a release; the older unfinished one is superseded', async () => {
    const { t, e } = await boundTemplate();
    assert.deepEqual(await releases(e.id), []);
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { imageName: 'ubuntu:24.04' } });
    const [first] = await releases(e.id);
    assert.deepEqual(
      { ...first, id: undefined, createdAt: undefined, updatedAt: undefined, delivery: undefined },
      {
        id: undefined,
        endpointId: e.id,
        version: 2,
        templateId: t.id,
        templateRevision: 2,
        diff: [{ field: 'imageName', from: t.imageName, to: 'ubuntu:24.04' }],
        status: 'pending',
        workersUpdated: 0,
        workersTotal: 0,
        createdAt: undefined,
        updatedAt: undefined,
        // Image checks are off here: no digest was pinned, and the release rolls out the tag.
        imageDigest: null,
        delivery: undefined,
      },
    );
    // The webhook's delivery is the platform's: shown to a platform key, never to the endpoint's owner.
    assert.equal('delivery' in first, false, 'no delivery state for a user key');
    const [seen] = await releases(e.id, platform);
    assert.equal(seen.delivery.attempts, 0);
    assert.equal(seen.delivery.deliveredAt, null);
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'nothing' } });
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'nothing' } }); // no change, no release
    const list = await releases(e.id);
    assert.deepEqual(
      list.map((r: { version: number; status: string }) => [r.version, r.status]),
      [
        [3, 'pending'],
        [2, 'superseded'],
      ],
    );
    assert.equal((await h.call('GET', `/v1/endpoints/${e.id}`, { key: alice })).body.version, 3);
    await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 } });
    const [rolledBack] = await releases(e.id);
    assert.equal(rolledBack.version, 4);
    assert.equal(rolledBack.templateRevision, 4);
  });

  test('an unbound template starts no release; an update that fails starts none', async () => {
    const { t, e } = await boundTemplate();
    const bad = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { containerDiskInGb: 0 } });
    assert.equal(bad.status, 400);
    const stale = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'x' }, headers: { 'if-match': '"r9"' } });
    assert.equal(stale.status, 412);
    assert.deepEqual(await releases(e.id), []);
  });

  test('platform keys report progress: pending → rolling → completed; finished releases change no more', async () => {
    const { t, e } = await boundTemplate();
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'v2' } });
    const [release] = await releases(e.id);
    const url = `/v1/endpoints/${e.id}/releases/${release.id}/progress`;
    assert.equal((await h.call('POST', url, { key: alice, body: { status: 'rolling', workersUpdated: 0, workersTotal: 3 } })).status, 403);
    const rolling = await h.call('POST', url, { key: platform, body: { status: 'rolling', workersUpdated: 1, workersTotal: 3 } });
    assert.equal(rolling.status, 200, rolling.text);
    assert.deepEqual([rolling.body.status, rolling.body.workersUpdated, rolling.body.workersTotal], ['rolling', 1, 3]);
    assert.equal(
      (await h.call('POST', url, { key: platform, body: { status: 'rolling', workersUpdated: 4, workersTotal: 3 } })).status,
      400,
    );
    assert.equal(
      (await h.call('POST', url, { key: platform, body: { status: 'pending', workersUpdated: 0, workersTotal: 3 } })).status,
      400,
    );
    const done = await h.call('POST', url, { key: platform, body: { status: 'completed', workersUpdated: 3, workersTotal: 3 } });
    assert.equal(done.body.status, 'completed');
    const after = await h.call('POST', url, { key: platform, body: { status: 'failed', workersUpdated: 3, workersTotal: 3 } });
    assert.equal(after.status, 409);
    assert.equal((await releases(e.id))[0].status, 'completed');
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'v3' } });
    assert.deepEqual(
      (await releases(e.id)).map((r: { status: string }) => r.status),
      ['pending', 'completed'],
      'a finished release is not superseded',
    );
    assert.equal(
      (
        await h.call('POST', `/v1/endpoints/${e.id}/releases/nosuchrelease000/progress`, {
          key: platform,
          body: { status: 'rolling', workersUpdated: 0, workersTotal: 1 },
        })
      ).status,
      404,
    );
  });

  test("releases are seen by the endpoint's owner and platform keys only", async () => {
    const { t, e } = await boundTemplate();
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'seen' } });
    assert.equal((await h.call('GET', `/v1/endpoints/${e.id}/releases`, { key: bob })).status, 404);
    assert.equal((await releases(e.id, platform)).length, 1);
  });

  test('updating a template while its endpoint is deleted: no deadlock, no 5xx', async () => {
    for (let round = 0; round < 15; round++) {
      const { t, e } = await boundTemplate();
      const [updated, deleted] = await Promise.all([
        h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: `race ${round}` } }),
        h.call('DELETE', `/v1/endpoints/${e.id}`, { key: alice }),
      ]);
      assert.equal(updated.status, 200, updated.text);
      assert.equal(deleted.status, 204, deleted.text);
      assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.readme, `race ${round}`);
    }
  });

  test('the outbox holds one event per release, written with it', async () => {
    const { t } = await boundTemplate();
    const before = await h.store.outbox.backlog();
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'event' } });
    const afterUpdate = await h.store.outbox.backlog();
    assert.equal(afterUpdate.pending, before.pending + 1);
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.body, new RegExp(`^podplate_outbox_pending ${afterUpdate.pending}$`, 'm'));
  });
});
