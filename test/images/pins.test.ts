import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Keyring, newKeyText } from '../../src/sealing/keyring.ts';
import { IMAGE_CHECKS_OFF, ImageChecks } from '../../src/usecases/image-checks.ts';
import { Limits } from '../../src/usecases/limits.ts';
import { Templates } from '../../src/usecases/templates.ts';
import { eventually } from '../support/eventually.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';
import { image, startRegistry, type TestRegistry } from '../support/registry.ts';

// Digests pinned per revision, against a real registry on both databases: resolve answers the pin, repin follows a
// tag pushed again with a new revision (and a release), a rollback rolls out the old digest; a check left by a process
// that died is taken up again; the per-account bound; checks turned off.

let registry: TestRegistry;

before(async () => {
  registry = await startRegistry('none');
});
after(() => registry.stop());

forEachDialect('pinned digests', (dialect) => {
  let h: Harness;
  let alice: string;
  let platform: string;

  before(async () => {
    h = await startHarness(dialect, {
      imageChecks: { enabled: true, insecureRegistries: registry.hosts, requestTimeoutMs: 2000, pollMs: 20, perAccountPerMinute: 0 },
    });
    alice = await h.key('alice');
    platform = await h.key('ops', 'platform');
  });
  after(() => h.close());

  const checked = async (id: string) => {
    let last: any;
    await eventually(`the image check of ${id}`, 20_000, async () => {
      last = (await h.call('GET', `/v1/templates/${id}?includeEndpointBoundTemplates=true`, { key: alice })).body;
      return { ok: last.imageCheck.status !== 'pending', seen: last.imageCheck };
    });
    return last;
  };
  const resolve = async (id: string) =>
    (await h.call('POST', `/v1/templates/${id}/resolve`, { key: platform, body: { account: 'alice' } })).body.imageDigest;

  test('repin follows the tag to its new digest in a new revision and release; the same digest changes nothing; rollback brings the old one back', async () => {
    h.podplate.imageChecks.start();
    const repository = `moving-${dialect}`;
    const old = await registry.push(repository, 'v1', image({ marker: 'old' }));
    const created = await h.call('POST', '/v1/templates', {
      key: alice,
      body: templateBody({ imageName: `${registry.host}/${repository}:v1`, isServerless: true }),
    });
    const t = await checked(created.body.id);
    assert.equal(t.imageCheck.digest, old);
    const endpoint = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: `ep ${dialect}`, templateId: t.id } });
    assert.equal(endpoint.status, 200, endpoint.text);

    const same = await h.call('POST', `/v1/templates/${t.id}/repin`, { key: alice });
    assert.equal(same.status, 200, same.text);
    assert.equal(same.body.revision, 1, 'the same digest changes nothing');

    const fresh = await registry.push(repository, 'v1', image({ marker: 'new' }));
    assert.notEqual(fresh, old);
    assert.equal(await resolve(t.id), old, 'until repinned, launches start the pinned digest, not the tag');
    const repinned = await h.call('POST', `/v1/templates/${t.id}/repin`, { key: alice, headers: { 'if-match': '"r1"' } });
    assert.equal(repinned.status, 200, repinned.text);
    assert.equal(repinned.body.revision, 2);
    assert.equal(repinned.body.imageCheck.status, 'verified');
    assert.equal(repinned.body.imageCheck.digest, fresh);
    assert.equal(await resolve(t.id), fresh);
    const [r2] = (await h.call('GET', `/v1/templates/${t.id}/revisions`, { key: alice })).body;
    assert.deepEqual(r2.diff, [{ field: 'imageDigest', from: old, to: fresh }]);
    assert.equal(r2.imageDigest, fresh);
    const releases = async () => (await h.call('GET', `/v1/endpoints/${endpoint.body.id}/releases`, { key: alice })).body;
    const [release] = await releases();
    assert.deepEqual([release.templateRevision, release.imageDigest, release.diff], [2, fresh, r2.diff]);

    const rolledBack = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 } });
    assert.equal(rolledBack.status, 200, rolledBack.text);
    assert.equal(rolledBack.body.revision, 3);
    assert.equal(await resolve(t.id), old, 'a rollback rolls out the old digest, not what the tag points at now');
    const [rollbackRelease] = await releases();
    assert.deepEqual([rollbackRelease.templateRevision, rollbackRelease.imageDigest], [3, old]);
    assert.equal((await checked(t.id)).imageCheck.digest, old, 'its check verifies the pinned digest, not the tag');

    const stale = await h.call('POST', `/v1/templates/${t.id}/repin`, { key: alice, headers: { 'if-match': '"r1"' } });
    assert.equal(stale.status, 412);
    const missing = await h.call('PATCH', `/v1/templates/${t.id}`, {
      key: alice,
      body: { imageName: `${registry.host}/${repository}:nope` },
    });
    assert.equal(missing.status, 200);
    const refused = await h.call('POST', `/v1/templates/${t.id}/repin`, { key: alice });
    assert.equal(refused.status, 409);
    assert.match(refused.body.detail, /no such repository or tag/);
  });

  test('a check left by a process that died is taken up again once its lease ends', async () => {
    await h.podplate.imageChecks.stop();
    const repository = `orphan-${dialect}`;
    const digest = await registry.push(repository, 'v1', image({ marker: repository }));
    const t = (
      await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ imageName: `${registry.host}/${repository}:v1` }) })
    ).body;
    // A process claims it and dies: the lease it took (a second) stands, and nothing settles the check.
    const from = new Date().toISOString();
    const claimed = await h.store.transaction((tx) =>
      tx.imageChecks.claim(t.id, from, new Date(Date.now() + 1000).toISOString(), 'dead-process'),
    );
    assert.equal(claimed?.templateId, t.id);
    const another = startHarnessOver(h);
    try {
      another.start();
      assert.equal((await h.store.imageChecks.queued(t.id))?.lease, 'dead-process');
      const done = await checked(t.id);
      assert.equal(done.imageCheck.status, 'verified');
      assert.equal(done.imageCheck.digest, digest);
    } finally {
      await another.stop();
    }
  });

  test('checks of one account beyond IMAGE_CHECKS_PER_ACCOUNT_PER_MINUTE are a 429 with Retry-After', async () => {
    const limited = await startHarness(dialect, {
      imageChecks: { enabled: true, insecureRegistries: registry.hosts, requestTimeoutMs: 2000, perAccountPerMinute: 2 },
    });
    try {
      const key = await limited.key('carol');
      const t = (await limited.call('POST', '/v1/templates', { key, body: templateBody({ imageName: `${registry.host}/nothing:v1` }) }))
        .body;
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await limited.call('POST', `/v1/templates/${t.id}/image-check`, { key }));
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 429],
      );
      assert.ok(Number(answers[2]?.headers['retry-after']) >= 1);
    } finally {
      await limited.close();
    }
  });

  test('with checks off, templates show off, a check answers the template as it is, and repin is a 409', async () => {
    const off = await startHarness(dialect);
    try {
      const key = await off.key('dave');
      const t = (await off.call('POST', '/v1/templates', { key, body: templateBody({ imageName: `${registry.host}/cuda:v1` }) })).body;
      assert.equal(t.imageCheck.status, 'off');
      const now = await off.call('POST', `/v1/templates/${t.id}/image-check`, { key });
      assert.deepEqual([now.status, now.body.imageCheck.status], [200, 'off']);
      const repin = await off.call('POST', `/v1/templates/${t.id}/repin`, { key });
      assert.equal(repin.status, 409);
      assert.match(repin.body.detail, /IMAGE_CHECK=off/);
    } finally {
      await off.close();
    }
  });
});

/** A second checker over the harness's database, as another process of the install runs one. */
function startHarnessOver(h: Harness): ImageChecks {
  return new ImageChecks(h.store, () => Keyring.fromText(newKeyText()), new Limits(), new Templates(h.store), {
    ...IMAGE_CHECKS_OFF,
    enabled: true,
    insecureRegistries: registry.hosts,
    requestTimeoutMs: 2000,
    pollMs: 20,
  });
}
