import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

const nextLink = (link: unknown): string | undefined => /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];

forEachDialect('GET /v1/templates', (dialect) => {
  let h: Harness;
  let alice: string;
  const created: { id: string; name: string; category: string; isServerless: boolean; imageName: string }[] = [];

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    const categories = ['NVIDIA', 'AMD', 'CPU'];
    for (let i = 0; i < 25; i++) {
      const r = await h.call('POST', '/v1/templates', {
        key: alice,
        body: templateBody({
          name: i % 5 === 0 ? `Stable Diffusion ${i}` : `worker_${i}%`,
          imageName: i % 7 === 0 ? `ghcr.io/acme/comfyui:${i}` : 'ubuntu:22.04',
          category: categories[i % 3],
          isServerless: i % 2 === 0,
        }),
      });
      assert.equal(r.status, 200);
      created.push(r.body);
    }
  });
  after(() => h.close());

  test('is a bare array, newest first, 100 by default', async () => {
    const r = await h.call('GET', '/v1/templates', { key: alice });
    assert.equal(r.status, 200);
    assert.ok(Array.isArray(r.body));
    assert.deepEqual(
      r.body.map((t: { id: string }) => t.id),
      created.map((t) => t.id).reverse(),
    );
    assert.equal(r.headers.link, undefined);
  });

  test('pages with limit and the Link header, every template exactly once, filters kept', async () => {
    const seen: string[] = [];
    let url: string | undefined = '/v1/templates?limit=7&isServerless=true';
    let pages = 0;
    while (url) {
      const r = await h.call('GET', url, { key: alice });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.body.length <= 7);
      seen.push(...r.body.map((t: { id: string }) => t.id));
      url = nextLink(r.headers.link);
      if (url) assert.match(url, /^\/v1\/templates\?limit=7&isServerless=true&cursor=/);
      pages++;
    }
    const expected = created
      .filter((t) => t.isServerless)
      .map((t) => t.id)
      .reverse();
    assert.deepEqual(seen, expected);
    assert.equal(pages, Math.ceil(expected.length / 7));
  });

  test('paging stays stable while others insert', async () => {
    const first = await h.call('GET', '/v1/templates?limit=10', { key: alice });
    const inserted = await h.call('POST', '/v1/templates', { key: alice, body: templateBody() });
    const second = await h.call('GET', nextLink(first.headers.link) as string, { key: alice });
    const ids = [...first.body, ...second.body].map((t: { id: string }) => t.id);
    assert.equal(new Set(ids).size, 20);
    assert.ok(!ids.includes(inserted.body.id));
    await h.call('DELETE', `/v1/templates/${inserted.body.id}`, { key: alice });
  });

  test('filters by category and isServerless', async () => {
    for (const category of ['NVIDIA', 'AMD', 'CPU']) {
      for (const isServerless of [true, false]) {
        const r = await h.call('GET', `/v1/templates?category=${category}&isServerless=${isServerless}`, { key: alice });
        const expected = created
          .filter((t) => t.category === category && t.isServerless === isServerless)
          .map((t) => t.id)
          .reverse();
        assert.deepEqual(
          r.body.map((t: { id: string }) => t.id),
          expected,
        );
      }
    }
    assert.equal((await h.call('GET', '/v1/templates?category=TPU', { key: alice })).status, 400);
    assert.equal((await h.call('GET', '/v1/templates?isServerless=maybe', { key: alice })).status, 400);
  });

  test('q matches a case-insensitive substring of name or image; LIKE wildcards are literal', async () => {
    const cases: [string, (t: (typeof created)[number]) => boolean][] = [
      ['stable DIFF', (t) => t.name.toLowerCase().includes('stable diff')],
      ['COMFYUI', (t) => t.imageName.includes('comfyui')],
      ['%', (t) => t.name.includes('%')],
      ['_1', (t) => t.name.includes('_1')],
      ['nothing-like-this', () => false],
    ];
    for (const [q, match] of cases) {
      const r = await h.call('GET', `/v1/templates?q=${encodeURIComponent(q)}`, { key: alice });
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.map((t: { id: string }) => t.id),
        created
          .filter(match)
          .map((t) => t.id)
          .reverse(),
        q,
      );
    }
  });

  test('q folds case as a reader would: a final sigma is a sigma (q=Σ, σ or ς finds "ΟΔΟΣ" and "Οδός")', async () => {
    const key = await h.key('greek');
    const ids = [];
    for (const name of ['ΟΔΟΣ', 'Οδός', 'σοφία'])
      ids.push((await h.call('POST', '/v1/templates', { key, body: templateBody({ name }) })).body.id);
    const found = async (q: string) =>
      (await h.call('GET', `/v1/templates?q=${encodeURIComponent(q)}`, { key })).body.map((t: { id: string }) => t.id).reverse();
    for (const q of ['Σ', 'σ', 'ς']) assert.deepEqual(await found(q), ids, q);
    for (const q of ['ΟΔΟΣ', 'οδος', 'οδοσ', 'ΟΔΌΣ']) assert.deepEqual(await found(q), q === 'ΟΔΌΣ' ? [ids[1]] : [ids[0]], q);
  });

  test('limit is 1 to 1000; a cursor must be one this service issued', async () => {
    for (const limit of ['0', '1001', '-1', '1.5', 'ten']) {
      const r = await h.call('GET', `/v1/templates?limit=${limit}`, { key: alice });
      assert.equal(r.status, 400);
      assert.equal(r.body.errors[0].path, '/limit');
    }
    assert.equal((await h.call('GET', '/v1/templates?limit=1000', { key: alice })).status, 200);
    for (const cursor of ['abc', 'not a cursor', 'x'.repeat(40)]) {
      const r = await h.call('GET', `/v1/templates?cursor=${encodeURIComponent(cursor)}`, { key: alice });
      assert.equal(r.status, 400);
      assert.equal(r.body.errors[0].path, '/cursor');
    }
  });

  test("other accounts see none of alice's private templates", async () => {
    const bob = await h.key('bob');
    const r = await h.call(
      'GET',
      '/v1/templates?includePublicTemplates=true&includePlatformTemplates=true&includeEndpointBoundTemplates=true',
      { key: bob },
    );
    assert.deepEqual(r.body, []);
  });
});
