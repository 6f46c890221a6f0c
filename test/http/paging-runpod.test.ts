import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';

// A client written for RunPod's v1 API lists templates without `limit` and reads the body alone: its list has no
// paging. Here the body is the same bare array, of the first 100; that more follow is said in `Link` and, plainly, in
// `X-Next-Page` (docs/api.md#paging), and following X-Next-Page until it is absent reads them all.

const TEMPLATES = 103;

forEachDialect('paging, as a RunPod v1 client meets it', (dialect) => {
  let h: Harness;
  let alice: string;
  const ids = new Set<string>();

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    for (let i = 0; i < TEMPLATES; i++) {
      const r = await h.call('POST', '/v1/templates', { key: alice, body: { name: `t${i}`, imageName: 'ubuntu' } });
      ids.add(r.body.id);
    }
  });
  after(() => h.close());

  test('a list without limit that has more than one page says so in X-Next-Page, beside Link; the last page says nothing', async () => {
    const first = await h.call('GET', '/v1/templates', { key: alice });
    assert.equal(first.status, 200);
    assert.ok(Array.isArray(first.body));
    assert.equal(first.body.length, 100);
    const next = first.headers['x-next-page'];
    assert.match(String(next), /^\/v1\/templates\?cursor=[A-Za-z0-9_-]+$/);
    assert.equal(first.headers.link, `<${next}>; rel="next"`);
    const last = await h.call('GET', String(next), { key: alice });
    assert.equal(last.body.length, TEMPLATES - 100);
    assert.equal(last.headers['x-next-page'], undefined);
    assert.equal(last.headers.link, undefined);
    // A list that fits one page carries neither.
    const one = await h.call('GET', '/v1/templates?limit=1000', { key: alice });
    assert.equal(one.body.length, TEMPLATES);
    assert.equal(one.headers['x-next-page'], undefined);
  });

  test("the docs' loop, following X-Next-Page until it is absent, reads every template once, with the filters kept", async () => {
    const seen: string[] = [];
    let next: string | undefined = '/v1/templates?category=NVIDIA';
    while (next) {
      const r = await h.call('GET', next, { key: alice });
      assert.equal(r.status, 200);
      seen.push(...r.body.map((t: { id: string }) => t.id));
      next = r.headers['x-next-page'] as string | undefined;
      if (next) assert.match(next, /category=NVIDIA/);
    }
    assert.equal(seen.length, TEMPLATES);
    assert.deepEqual(new Set(seen), ids);
  });

  test('every paged list announces its next page the same way', async () => {
    const id = [...ids][0];
    for (let i = 0; i < 2; i++) await h.call('PATCH', `/v1/templates/${id}`, { key: alice, body: { readme: `v${i}` } });
    const revisions = await h.call('GET', `/v1/templates/${id}/revisions?limit=2`, { key: alice });
    assert.equal(revisions.body.length, 2);
    assert.match(String(revisions.headers['x-next-page']), new RegExp(`^/v1/templates/${id}/revisions\\?limit=2&cursor=`));
    assert.equal(revisions.headers.link, `<${revisions.headers['x-next-page']}>; rel="next"`);
  });
});
