import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

forEachDialect('revisions, rollback, conditional writes, idempotency, usage', (dialect) => {
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

  const create = async (overrides: Record<string, unknown> = {}, key = alice) => {
    const r = await h.call('POST', '/v1/templates', { key, body: templateBody(overrides) });
    assert.equal(r.status, 200, r.text);
    return r;
  };

  test('every change is a revision: snapshot, diff, key, time; newest first; paged', async () => {
    const t = (await create({ env: { A: '1' }, readme: 'v1' })).body;
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'v2' } });
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'v2' } }); // no change: no revision
    const third = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { env: { B: '2' }, containerDiskInGb: 9 } });
    assert.equal(third.body.revision, 3);
    const r = await h.call('GET', `/v1/templates/${t.id}/revisions`, { key: alice });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.map((x: { revision: number }) => x.revision),
      [3, 2, 1],
    );
    const [r3, r2, r1] = r.body;
    assert.deepEqual(r3.diff, [
      { field: 'containerDiskInGb', from: 50, to: 9 },
      { field: 'env', from: { A: '1' }, to: { B: '2' } },
    ]);
    assert.deepEqual(r2.diff, [{ field: 'readme', from: 'v1', to: 'v2' }]);
    assert.deepEqual(r1.diff, []);
    assert.equal(r1.template.readme, 'v1');
    assert.equal(r3.template.containerDiskInGb, 9);
    assert.deepEqual(Object.keys(r3).sort(), ['author', 'createdAt', 'diff', 'imageDigest', 'keyId', 'keyLabel', 'revision', 'template']);
    assert.equal(r3.author, 'alice', "the author is the name of the key's account");
    assert.equal(r3.keyLabel, '', 'a key made without a label');
    assert.equal(r3.template.id, undefined, 'a snapshot is the content only');
    assert.match(r3.keyId, /^key_/);
    assert.equal(r3.createdAt, third.body.updatedAt);
    const paged = await h.call('GET', `/v1/templates/${t.id}/revisions?limit=2`, { key: alice });
    assert.equal(paged.body.length, 2);
    const next = /^<([^>]+)>; rel="next"$/.exec(String(paged.headers.link))?.[1] as string;
    assert.deepEqual(
      (await h.call('GET', next, { key: alice })).body.map((x: { revision: number }) => x.revision),
      [1],
    );
  });

  test("a revision names its key's label, when the key has one", async () => {
    const made = await h.call('POST', '/v1/accounts/alice/keys', { key: alice, body: { label: 'ci laptop' } });
    assert.equal(made.status, 201, made.text);
    const t = (await create({}, made.body.key)).body;
    const [first] = (await h.call('GET', `/v1/templates/${t.id}/revisions`, { key: alice })).body;
    assert.equal(first.author, 'alice');
    assert.equal(first.keyLabel, 'ci laptop');
  });

  test("revisions are the owner's: 403 for a public template of another, 404 for a private one", async () => {
    const pub = (await create({ isPublic: true })).body;
    const priv = (await create()).body;
    assert.equal((await h.call('GET', `/v1/templates/${pub.id}/revisions`, { key: bob })).status, 403);
    assert.equal((await h.call('GET', `/v1/templates/${priv.id}/revisions`, { key: bob })).status, 404);
  });

  test('rollback makes a new revision equal to the old one; to an unknown revision is a 400', async () => {
    const t = (await create({ readme: 'first', ports: ['22/tcp'] })).body;
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'second', ports: [] } });
    const r = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { ...t, revision: 3, updatedAt: r.body.updatedAt });
    const revisions = (await h.call('GET', `/v1/templates/${t.id}/revisions`, { key: alice })).body;
    assert.deepEqual(revisions[0].diff, [
      { field: 'ports', from: [], to: ['22/tcp'] },
      { field: 'readme', from: 'second', to: 'first' },
    ]);
    const same = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 } });
    assert.equal(same.body.revision, 3, 'rolling back to what it is changes nothing');
    const missing = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 9 } });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.errors[0].path, '/revision');
    for (const body of [{}, { revision: 0 }, { revision: '1' }, { revision: 1, extra: true }]) {
      assert.equal((await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body })).status, 400, JSON.stringify(body));
    }
    assert.equal((await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: bob, body: { revision: 1 } })).status, 404);
  });

  test('rollback onto a name another template took since is a 409', async () => {
    const t = (await create({ name: 'original name' })).body;
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { name: 'renamed' } });
    await create({ name: 'original name' });
    const r = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 } });
    assert.equal(r.status, 409);
  });

  test('ETag on every template response; If-Match on update, delete and rollback; 412 on mismatch', async () => {
    const created = await create();
    const t = created.body;
    assert.equal(created.headers.etag, '"r1"');
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).headers.etag, '"r1"');
    const updated = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'x' }, headers: { 'if-match': '"r1"' } });
    assert.equal(updated.status, 200);
    assert.equal(updated.headers.etag, '"r2"');
    const stale = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'y' }, headers: { 'if-match': '"r1"' } });
    assert.equal(stale.status, 412);
    assert.equal(stale.body.type, 'https://podplate.dev/problems/precondition-failed');
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.readme, 'x');
    for (const header of ['"r1", "r2"', '*']) {
      assert.equal(
        (await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: {}, headers: { 'if-match': header } })).status,
        200,
        header,
      );
    }
    assert.equal(
      (await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: {}, headers: { 'if-match': 'W/"r2"' } })).status,
      412,
      'weak tags never match',
    );
    const malformed = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: {}, headers: { 'if-match': 'r2' } });
    assert.equal(malformed.status, 400);
    assert.deepEqual(malformed.body.errors, [{ in: 'header', path: '/if-match', message: 'is not a list of entity tags' }]);
    assert.equal(
      (await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 }, headers: { 'if-match': '"r1"' } }))
        .status,
      412,
    );
    assert.equal((await h.call('DELETE', `/v1/templates/${t.id}`, { key: alice, headers: { 'if-match': '"r1"' } })).status, 412);
    assert.equal((await h.call('DELETE', `/v1/templates/${t.id}`, { key: alice, headers: { 'if-match': '"r2"' } })).status, 204);
  });

  test('of N concurrent writers with the same ETag, exactly one wins', async () => {
    const t = (await create()).body;
    const writers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: `writer ${i}` }, headers: { 'if-match': '"r1"' } }),
      ),
    );
    const statuses = writers.map((w) => w.status).sort();
    assert.deepEqual(statuses, [200, ...Array(9).fill(412)]);
    const winner = writers.find((w) => w.status === 200);
    const now = await h.call('GET', `/v1/templates/${t.id}`, { key: alice });
    assert.equal(now.body.readme, winner?.body.readme);
    assert.equal(now.body.revision, 2);
  });

  test('a conditional delete racing an update: never both', async () => {
    for (let round = 0; round < 10; round++) {
      const t = (await create()).body;
      const [updated, deleted] = await Promise.all([
        h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'newer' } }),
        h.call('DELETE', `/v1/templates/${t.id}`, { key: alice, headers: { 'if-match': '"r1"' } }),
      ]);
      assert.ok(!(updated.status === 200 && deleted.status === 204), `round ${round}: ${updated.status} ${deleted.status}`);
      assert.ok([200, 404].includes(updated.status) && [204, 412].includes(deleted.status), `${updated.status} ${deleted.status}`);
    }
  });

  test('numbers beyond what a revision can be are a 400 or an empty page, never a 5xx', async () => {
    const t = (await create()).body;
    const big = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 2147483648 } });
    assert.equal(big.status, 400);
    const cursor = Buffer.from('p999999999999999').toString('base64url');
    const page = await h.call('GET', `/v1/templates/${t.id}/revisions?cursor=${cursor}`, { key: alice });
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.map((r: { revision: number }) => r.revision),
      [1],
    );
  });

  test('Idempotency-Key on create: the same body gets the first response again; another body a 422', async () => {
    const body = templateBody();
    const headers = { 'idempotency-key': `create-${body.name}` };
    const first = await h.call('POST', '/v1/templates', { key: alice, body, headers });
    assert.equal(first.status, 200);
    const again = await h.call('POST', '/v1/templates', { key: alice, body, headers });
    assert.equal(again.status, 200);
    assert.equal(again.text, first.text);
    assert.equal(again.headers.location, first.headers.location);
    assert.equal(again.headers.etag, first.headers.etag);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    const other = await h.call('POST', '/v1/templates', { key: alice, body: { ...body, readme: 'different' }, headers });
    assert.equal(other.status, 422);
    assert.equal(other.body.errors[0].path, '/idempotency-key');
    const list = await h.call('GET', `/v1/templates?q=${encodeURIComponent(body.name)}`, { key: alice });
    assert.equal(list.body.length, 1, 'created once');
    const bobs = await h.call('POST', '/v1/templates', { key: bob, body, headers });
    assert.equal(bobs.status, 200, 'keys are per account');
    assert.notEqual(bobs.body.id, first.body.id);
    const bad = await h.call('POST', '/v1/templates', {
      key: alice,
      body: templateBody(),
      headers: { 'idempotency-key': 'x'.repeat(256) },
    });
    assert.equal(bad.status, 400);
  });

  test('concurrent retries with one Idempotency-Key create once and answer alike', async () => {
    const body = templateBody();
    const replies = await Promise.all(
      Array.from({ length: 6 }, () =>
        h.call('POST', '/v1/templates', { key: alice, body, headers: { 'idempotency-key': `race-${body.name}` } }),
      ),
    );
    assert.deepEqual(
      replies.map((r) => r.status),
      Array(6).fill(200),
    );
    assert.equal(new Set(replies.map((r) => r.body.id)).size, 1);
  });

  test('Idempotency-Key on rollback', async () => {
    const t = (await create({ readme: 'one' })).body;
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'two' } });
    const headers = { 'idempotency-key': `rollback-${t.id}` };
    const first = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 }, headers });
    await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { readme: 'three' } });
    const again = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 1 }, headers });
    assert.equal(again.text, first.text, 'the first response, not a second rollback');
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.readme, 'three');
    assert.equal((await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 2 }, headers })).status, 422);
  });

  test('usage: platform keys only, counted once per usageId, sums on the template', async () => {
    const t = (await create()).body;
    const report = (key: string, body: unknown) => h.call('POST', `/v1/templates/${t.id}/usage`, { key, body });
    assert.equal((await report(alice, { usageId: 'u1', runtimeInMin: 5, earned: 1.5 })).status, 403);
    const first = await report(platform, { usageId: 'u1', runtimeInMin: 5, earned: 1.5 });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual([first.body.runtimeInMin, first.body.earned, first.body.revision], [5, 1.5, 1]);
    const repeat = await report(platform, { usageId: 'u1', runtimeInMin: 5, earned: 1.5 });
    assert.deepEqual([repeat.body.runtimeInMin, repeat.body.earned], [5, 1.5]);
    const second = await report(platform, { usageId: 'u2', runtimeInMin: 10, earned: 0.25 });
    assert.deepEqual([second.body.runtimeInMin, second.body.earned], [15, 1.75]);
    const clash = await report(platform, { usageId: 'u2', runtimeInMin: 11, earned: 0.25 });
    assert.equal(clash.status, 409);
    for (const bad of [
      { usageId: '', runtimeInMin: 1, earned: 1 },
      { usageId: 'u3', runtimeInMin: -1, earned: 1 },
      { usageId: 'u3', runtimeInMin: 1.5, earned: 1 },
      { usageId: 'u3', runtimeInMin: 1, earned: -0.1 },
      { usageId: 'u3' },
    ]) {
      assert.equal((await report(platform, bad)).status, 400, JSON.stringify(bad));
    }
    assert.equal(
      (await h.call('POST', '/v1/templates/nosuchtemplate00/usage', { key: platform, body: { usageId: 'u4', runtimeInMin: 1, earned: 1 } }))
        .status,
      404,
    );
    const concurrent = await Promise.all(
      Array.from({ length: 5 }, () => report(platform, { usageId: 'u5', runtimeInMin: 100, earned: 1 })),
    );
    assert.ok(concurrent.every((r) => r.status === 200));
    assert.equal((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.runtimeInMin, 115);
  });
});
