import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, registryAuth, startHarness, templateBody } from '../support/harness.ts';

// Names that look alike are one name: compared after NFC normalisation and case folding, with characters that hide or
// reorder text refused, and words mixing Latin with Cyrillic or Greek letters refused (docs/api.md, "Names").

forEachDialect('names that look alike', (dialect) => {
  let h: Harness;
  let key: string;
  before(async () => {
    h = await startHarness(dialect);
    key = await h.key('namer');
  });
  after(() => h.close());

  const create = (name: string, k = key) => h.call('POST', '/v1/templates', { key: k, body: templateBody({ name }) });

  test('composed and decomposed, upper and lower case: one name, a 409 naming /name', async () => {
    assert.equal((await create('Café Notebook')).status, 200);
    for (const twin of ['Cafe\u0301 Notebook', 'CAFÉ NOTEBOOK', 'café notebook']) {
      const r = await create(twin);
      assert.equal(r.status, 409, `${JSON.stringify(twin)}: ${r.text}`);
      assert.equal(r.body.errors[0].path, '/name');
    }
    assert.equal((await create('Café Notebook', await h.key('other-namer'))).status, 200, 'another account may use it');
  });

  test('invisible and text-reordering characters, and names of nothing visible, are a 400 naming /name', async () => {
    const cases: [string, RegExp][] = [
      ['zero\u200bwidth', /invisible or text-reordering characters \(U\+200B\)/],
      ['word\u2060joiner', /U\+2060/],
      ['evil\u202egnp.exe', /U\+202E/],
      ['\u200d\ufe0f', /must contain a visible character/],
      ['p\u0430ypal', /must not write Latin, Greek and Cyrillic letters next to each other/],
    ];
    for (const [name, message] of cases) {
      const r = await create(name);
      assert.equal(r.status, 400, `${JSON.stringify(name)}: ${r.text}`);
      assert.equal(r.body.errors[0].path, '/name');
      assert.match(r.body.errors[0].message, message);
    }
    assert.equal((await create('🔥 ❤️ comfy')).status, 200, 'emoji, with their variation selectors, are names');
  });

  test('concurrent creates of one name in different forms: exactly one is made', async () => {
    const forms = ['Ǻngström', 'A\u030A\u0301ngstro\u0308m', 'ǺNGSTRÖM', 'ǻngström', 'A\u030a\u0301NGSTRÖM'];
    const replies = await Promise.all([...forms, ...forms].map((name) => create(name)));
    assert.deepEqual(replies.map((r) => r.status).sort(), [200, ...Array(9).fill(409)]);
  });

  test('search folds the same way: "istanbul" finds "İstanbul", a decomposed term finds the composed name', async () => {
    assert.equal((await create('İstanbul GPU box')).status, 200);
    assert.equal((await create('Crème brûlée')).status, 200);
    const search = async (q: string) =>
      (await h.call('GET', `/v1/templates?q=${encodeURIComponent(q)}`, { key })).body.map((t: { name: string }) => t.name);
    assert.deepEqual(await search('istanbul'), ['İstanbul GPU box']);
    assert.deepEqual(await search('İSTANBUL'), ['İstanbul GPU box']);
    assert.deepEqual(await search('cre\u0300me'), ['Crème brûlée']);
  });

  test('endpoints and registry auths compare their names the same way; accounts too', async () => {
    await registryAuth(h, key, 'GHCR');
    const twin = await h.call('POST', '/v1/containerregistryauth', { key, body: { name: 'ghcr', username: 'u', password: 'p' } });
    assert.equal(twin.status, 409, twin.text);
    const t = (await h.call('POST', '/v1/templates', { key, body: templateBody({ isServerless: true }) })).body;
    const u = (await h.call('POST', '/v1/templates', { key, body: templateBody({ isServerless: true }) })).body;
    assert.equal((await h.call('POST', '/v1/endpoints', { key, body: { name: 'Résumé', templateId: t.id } })).status, 200);
    const ep = await h.call('POST', '/v1/endpoints', { key, body: { name: 'RE\u0301SUME\u0301', templateId: u.id } });
    assert.equal(ep.status, 409, ep.text);
    const upper = await h.key('NAMER');
    assert.equal((await h.call('GET', '/v1/me', { key: upper })).body.accountName, 'namer', 'one account, whatever the case');
  });
});
