import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PAGE_MAX_BYTES } from '../../src/domain/page.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// Pages are bounded in bytes as well as in items: a page of large templates, revisions or releases ends before
// PAGE_MAX_BYTES of JSON and the rest follows in `Link`, each item exactly once. (A list of 1,000 templates of
// about 1 MB each was once one answer of a gigabyte, built in memory.)

/** An env of 30 values of 32,000 characters: a template of about 1 MB, as large as a create body allows. */
const bigEnv = (tag: string) => Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`VAR_${i}`, `${tag}${i}`.padEnd(32_000, 'x')]));

forEachDialect('pages bounded in bytes', (dialect) => {
  let h: Harness;
  let key: string;
  before(async () => {
    h = await startHarness(dialect);
    key = await h.key('hoarder');
  });
  after(() => h.close());

  /** Every item of a list, following `Link` from `url`, with the byte size of each page. */
  async function follow(url: string) {
    const items: any[] = [];
    const sizes: number[] = [];
    let next: string | undefined = url;
    while (next) {
      const r = await h.call('GET', next, { key });
      assert.equal(r.status, 200, r.text.slice(0, 300));
      sizes.push(Buffer.byteLength(r.text));
      items.push(...r.body);
      next = /^<([^>]+)>; rel="next"$/.exec(String(r.headers.link ?? ''))?.[1];
    }
    return { items, sizes };
  }

  test('a list of large templates is cut into pages under the byte bound, and Link yields each exactly once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await h.call('POST', '/v1/templates', { key, body: templateBody({ name: `big ${i}`, env: bigEnv(`t${i}`) }) });
      assert.equal(r.status, 200, r.text.slice(0, 300));
      ids.unshift(r.body.id);
    }
    const { items, sizes } = await follow('/v1/templates?limit=1000&q=big');
    assert.deepEqual(
      items.map((t) => t.id),
      ids,
    );
    assert.ok(sizes.length >= 2, `one page of ${sizes[0]} bytes`);
    for (const size of sizes) assert.ok(size <= PAGE_MAX_BYTES, `a page of ${size} bytes`);
    assert.equal(items[0].env.VAR_0, bigEnv('t11').VAR_0);
  });

  test('revisions and releases of a large template are paged under the byte bound too', async () => {
    const created = await h.call('POST', '/v1/templates', {
      key,
      body: templateBody({ name: 'big worker', isServerless: true, env: bigEnv('r0') }),
    });
    const id = created.body.id;
    const endpoint = await h.call('POST', '/v1/endpoints', { key, body: { name: 'big', templateId: id } });
    assert.equal(endpoint.status, 200, endpoint.text);
    // Each change replaces the whole env: a revision holds the new env and a diff of both, about 3 MB.
    for (let i = 1; i <= 6; i++) {
      const r = await h.call('PATCH', `/v1/templates/${id}`, { key, body: { env: bigEnv(`r${i}`) } });
      assert.equal(r.status, 200, r.text.slice(0, 300));
    }
    const revisions = await follow(`/v1/templates/${id}/revisions?limit=100`);
    assert.deepEqual(
      revisions.items.map((r) => r.revision),
      [7, 6, 5, 4, 3, 2, 1],
    );
    assert.ok(revisions.sizes.length >= 2, `one page of ${revisions.sizes[0]} bytes`);
    for (const size of revisions.sizes) assert.ok(size <= PAGE_MAX_BYTES, `a page of ${size} bytes`);

    const releases = await follow(`/v1/endpoints/${endpoint.body.id}/releases?limit=100`);
    assert.deepEqual(
      releases.items.map((r) => r.version),
      [7, 6, 5, 4, 3, 2],
    );
    assert.ok(releases.sizes.length >= 2, `one page of ${releases.sizes[0]} bytes`);
    for (const size of releases.sizes) assert.ok(size <= PAGE_MAX_BYTES, `a page of ${size} bytes`);
  });

  test('small items still fill a page up to its limit', async () => {
    for (let i = 0; i < 5; i++) await h.call('POST', '/v1/templates', { key, body: templateBody({ name: `small ${i}` }) });
    const r = await h.call('GET', '/v1/templates?q=small&limit=3', { key });
    assert.equal(r.body.length, 3);
    assert.match(String(r.headers.link), /rel="next"/);
    const all = await follow('/v1/templates?q=small&limit=1000');
    assert.equal(all.items.length, 5);
    assert.equal(all.sizes.length, 1);
  });
});
