import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// The list narrowed to one scope (issue #18): the UI's tabs each fetch one scope, so every page is full, whatever
// the caller holds of its own. Items carry their owner's account name; the public and platform scopes can be
// sorted by popularity (runtime), with cursors that follow that order.

const nextLink = (link: unknown): string | undefined => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];
interface Listed {
  id: string;
  name: string;
  ownerName: string;
  runtimeInMin: number;
}

forEachDialect('GET /v1/templates?scope=…', (dialect) => {
  let h: Harness;
  let alice: string;
  let carol: string;
  let platform: string;
  const official: Listed[] = [];
  let privateOfficial: Listed;
  const carolsPublic: Listed[] = [];
  const alicesOwn: Listed[] = [];
  const alicesPublic: Listed[] = [];
  let alicesBound: Listed;

  /** Every page of `url`, following Link; each page but the last must be full. */
  async function all(url: string, key: string, limit: number): Promise<Listed[]> {
    const seen: Listed[] = [];
    let next: string | undefined = `${url}${url.includes('?') ? '&' : '?'}limit=${limit}`;
    while (next) {
      const r = await h.call('GET', next, { key });
      assert.equal(r.status, 200, r.text);
      next = nextLink(r.headers.link);
      if (next) assert.equal(r.body.length, limit, `a full page before the last: ${next}`);
      seen.push(...r.body);
    }
    return seen;
  }
  const create = async (key: string, body: Record<string, unknown>): Promise<Listed> => {
    const r = await h.call('POST', '/v1/templates', { key, body: templateBody(body) });
    assert.equal(r.status, 200, r.text);
    order.push(r.body.id);
    return r.body;
  };
  const order: string[] = [];
  const ids = (list: Listed[]) => list.map((t) => t.id);
  const newestFirst = (list: Listed[]) => order.filter((id) => ids(list).includes(id)).reverse();

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    carol = await h.key('carol');
    platform = await h.key('podplate', 'platform');
    // Interleaved, so that no scope's templates are all newer than another's.
    for (let i = 0; i < 25; i++) {
      if (i < 11) official.push(await create(platform, { name: `official ${i}`, isPublic: true }));
      if (i < 8) carolsPublic.push(await create(carol, { name: `carol public ${i}`, isPublic: true }));
      if (i < 3) await create(carol, { name: `carol private ${i}` });
      const mine = await create(alice, { name: `alice ${i}`, isPublic: i % 5 === 0 });
      alicesOwn.push(mine);
      if (i % 5 === 0) alicesPublic.push(mine);
    }
    privateOfficial = await create(platform, { name: 'official private' });
    alicesBound = await create(alice, { name: 'alice bound', isPublic: true, isServerless: true });
    const bound = await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'inference', templateId: alicesBound.id } });
    assert.equal(bound.status, 200, bound.text);
  });
  after(() => h.close());

  test('a user with 25 templates of their own sees every official template on the Official tab, in full pages', async () => {
    const first = await h.call('GET', '/v1/templates?scope=platform&limit=20', { key: alice });
    assert.equal(first.status, 200);
    assert.deepEqual(ids(first.body), newestFirst(official));
    assert.equal(first.headers.link, undefined);
    assert.deepEqual(ids(await all('/v1/templates?scope=platform', alice, 4)), newestFirst(official));
    // A platform key's official scope holds its private official templates too (its own).
    assert.deepEqual(ids(await all('/v1/templates?scope=platform', platform, 5)), newestFirst([...official, privateOfficial]));
  });

  test("the Public tab is every public community template, the caller's own included, and nothing else", async () => {
    const expected = newestFirst([...carolsPublic, ...alicesPublic]);
    assert.deepEqual(ids(await all('/v1/templates?scope=public', carol, 100)), expected);
    // The same catalogue, in the same order, for everyone; in pages of 3, each full.
    assert.deepEqual(ids(await all('/v1/templates?scope=public', alice, 3)), expected);
    assert.deepEqual(ids(await all('/v1/templates?scope=public', platform, 3)), expected);
  });

  test("the own scope is the caller's templates; bound ones with includeEndpointBoundTemplates, as always", async () => {
    assert.deepEqual(ids(await all('/v1/templates?scope=own', alice, 6)), newestFirst(alicesOwn));
    assert.deepEqual(
      ids(await all('/v1/templates?scope=own&includeEndpointBoundTemplates=true', alice, 6)),
      newestFirst([...alicesOwn, alicesBound]),
    );
    // Bound public templates of the public scope follow the same flag.
    const withBound = ids(await all('/v1/templates?scope=public&includeEndpointBoundTemplates=true', carol, 50));
    assert.equal(withBound[0], alicesBound.id);
    // `q` narrows within the scope; the caller's bound templates are found with the bound flag (the CLI's --bound).
    assert.deepEqual(ids(await all('/v1/templates?scope=own&q=ALICE%20BOUND', alice, 5)), []);
    assert.deepEqual(ids(await all('/v1/templates?q=alice%20bound&includeEndpointBoundTemplates=true', alice, 5)), [alicesBound.id]);
  });

  test('the scope decides the set: includePublicTemplates and includePlatformTemplates do not change it', async () => {
    const platformOnly = newestFirst(official);
    for (const flags of ['includePublicTemplates=true&includePlatformTemplates=true', 'includePlatformTemplates=false']) {
      assert.deepEqual(ids(await all(`/v1/templates?scope=platform&${flags}`, alice, 100)), platformOnly, flags);
    }
    const own = ids(await all('/v1/templates?scope=own&includePublicTemplates=true&includePlatformTemplates=true', alice, 100));
    assert.deepEqual(own, newestFirst(alicesOwn));
    // Without a scope, nothing changed: own, then others' by flag, merged newest first.
    const mixed = ids(await all('/v1/templates?includePlatformTemplates=true', alice, 7));
    assert.deepEqual(mixed, newestFirst([...alicesOwn, ...official]));
    for (const bad of ['scope=mine', 'scope=', 'scope=PUBLIC']) {
      const r = await h.call('GET', `/v1/templates?${bad}`, { key: alice });
      assert.equal(r.status, 400, bad);
      assert.equal(r.body.errors[0].path, '/scope');
    }
  });

  test("list items carry the owner's account name, which an update accepts back unchanged", async () => {
    const listed = await all('/v1/templates?scope=public', alice, 100);
    for (const t of listed) assert.equal(t.ownerName, ids(alicesPublic).includes(t.id) ? 'alice' : 'carol');
    for (const t of await all('/v1/templates?scope=platform', alice, 100)) assert.equal(t.ownerName, 'podplate');
    const [mine] = (await h.call('GET', '/v1/templates?scope=own&limit=1', { key: alice })).body as Listed[];
    assert.equal(mine?.ownerName, 'alice');
    // GET by id is as before; the list's item, edited and sent back whole, is accepted.
    assert.equal((await h.call('GET', `/v1/templates/${mine?.id}`, { key: alice })).body.ownerName, undefined);
    const sentBack = await h.call('POST', `/v1/templates/${mine?.id}/update`, { key: alice, body: { ...mine, readme: 'edited' } });
    assert.equal(sentBack.status, 200, sentBack.text);
    assert.equal(sentBack.body.readme, 'edited');
    const renamed = await h.call('PATCH', `/v1/templates/${mine?.id}`, { key: alice, body: { ownerName: 'mallory', readme: 'x' } });
    assert.equal(renamed.status, 400);
    assert.deepEqual(renamed.body.errors, [
      { in: 'body', path: '/ownerName', message: 'is read-only: the server sets it; send its current value ("alice") or leave it out' },
    ]);
    // Create stays strict: a server-set field is refused.
    const created = await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ ownerName: 'alice' }) });
    assert.equal(created.status, 400);
    assert.deepEqual(created.body.errors, [{ in: 'body', path: '/ownerName', message: 'is read-only: the server sets it' }]);
  });

  test('sort=popular orders the public and platform scopes by runtime, then newest; its cursors follow that order', async () => {
    const runtimes = [30, 0, 500, 30, 7, 0, 500, 1];
    for (const [i, t] of carolsPublic.entries()) {
      const minutes = runtimes[i] as number;
      if (minutes === 0) continue;
      const r = await h.call('POST', `/v1/templates/${t.id}/usage`, {
        key: platform,
        body: { usageId: `u${dialect}${i}`, runtimeInMin: minutes, earned: 1 },
      });
      assert.equal(r.status, 200, r.text);
    }
    const publicNow = await all('/v1/templates?scope=public', alice, 100);
    const expected = publicNow
      .map((t, newness) => ({ id: t.id, runtime: runtimes[ids(carolsPublic).indexOf(t.id)] ?? 0, newness }))
      .sort((a, b) => b.runtime - a.runtime || a.newness - b.newness)
      .map((t) => t.id);
    assert.deepEqual(ids(await all('/v1/templates?scope=public&sort=popular', alice, 2)), expected);
    assert.deepEqual(ids(await all('/v1/templates?scope=public&sort=popular', alice, 100)), expected);
    const popularOfficial = await all('/v1/templates?scope=platform&sort=popular', alice, 3);
    assert.deepEqual(ids(popularOfficial), newestFirst(official), 'no runtime yet: newest first');
    assert.deepEqual(ids(await all('/v1/templates?scope=public&sort=newest', alice, 4)), ids(publicNow));
  });

  test('sort=popular needs the public or platform scope; a cursor belongs to its order', async () => {
    for (const query of ['sort=popular', 'sort=popular&scope=own', 'sort=popular&includePublicTemplates=true', 'sort=loved']) {
      const r = await h.call('GET', `/v1/templates?${query}`, { key: alice });
      assert.equal(r.status, 400, query);
      assert.equal(r.body.errors[0].path, '/sort', query);
      assert.equal(r.body.errors[0].in, 'query', query);
    }
    const popular = await h.call('GET', '/v1/templates?scope=public&sort=popular&limit=1', { key: alice });
    const cursor = new URL(nextLink(popular.headers.link) as string, 'http://x').searchParams.get('cursor');
    const newest = await h.call('GET', '/v1/templates?scope=public&limit=1', { key: alice });
    const newestCursor = new URL(nextLink(newest.headers.link) as string, 'http://x').searchParams.get('cursor');
    for (const url of [`/v1/templates?scope=public&cursor=${cursor}`, `/v1/templates?scope=public&sort=popular&cursor=${newestCursor}`]) {
      const r = await h.call('GET', url, { key: alice });
      assert.equal(r.status, 400, url);
      assert.equal(r.body.errors[0].path, '/cursor');
    }
  });
});
