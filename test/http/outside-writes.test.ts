import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { eventually } from '../support/eventually.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// A template row changed by plain SQL (an operator's fix, an older process, a migration) is served as the row now
// says, by GET and by the list: the stored JSON is never staler than its row, whoever wrote it, and the read cache
// hears of the write from the database (at once on SQLite; on PostgreSQL by NOTIFY, polled for here up to 1 s).

forEachDialect('rows written outside the service', (dialect) => {
  let h: Harness;
  let key: string;
  let raw: Kysely<any>;
  before(async () => {
    h = await startHarness(dialect);
    key = await h.key('olga');
    raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
  });
  after(async () => {
    await raw.destroy();
    await h.close();
  });

  const create = async (overrides = {}) => {
    const created = await h.call('POST', '/v1/templates', { key, body: templateBody(overrides) });
    assert.equal(created.status, 200, created.text);
    return created.body as { id: string; name: string; revision: number };
  };
  const get = (id: string) => h.call('GET', `/v1/templates/${id}`, { key });
  /** The GET of `id` once `ok` holds of it (within 1 s). */
  const served = async (id: string, ok: (r: Awaited<ReturnType<typeof get>>) => boolean) => {
    let last = await get(id);
    await eventually('the SQL write is served', 1000, async () => {
      last = await get(id);
      return ok(last);
    });
    return last;
  };
  const listed = async (q: string) => (await h.call('GET', `/v1/templates?q=${encodeURIComponent(q)}`, { key })).body as any[];

  test('an UPDATE of a column is served by the next GET and the next list page', async () => {
    const t = await create({ readme: 'before' });
    assert.equal((await get(t.id)).body.readme, 'before');
    await sql`update templates set image_name = 'acme/fixed:2', readme = 'fixed by hand', volume_in_gb = 7 where id = ${t.id}`.execute(raw);
    const shown = (await served(t.id, (r) => r.body.readme === 'fixed by hand')).body;
    assert.deepEqual([shown.imageName, shown.readme, shown.volumeInGb], ['acme/fixed:2', 'fixed by hand', 7]);
    const [item] = await listed(t.name);
    assert.deepEqual([item.id, item.imageName, item.readme, item.volumeInGb], [t.id, 'acme/fixed:2', 'fixed by hand', 7]);
  });

  test('q finds a template by the name and image SQL gave it, and no longer by the old ones', async () => {
    const t = await create({ name: 'Sqlrenamed Before', imageName: 'acme/oldimage:1' });
    await sql`update templates set name = 'Sqlrenamed After', image_name = 'acme/NEWIMAGE:2' where id = ${t.id}`.execute(raw);
    const ids = async (q: string) => (await listed(q)).map((item) => item.id);
    assert.deepEqual(await ids('sqlrenamed after'), [t.id]);
    assert.deepEqual(await ids('IMAGE:2'), [t.id]);
    assert.deepEqual(await ids('sqlrenamed before'), []);
    assert.deepEqual(await ids('oldimage'), []);
  });

  test('an UPDATE that also writes the old representation back is served as the row says', async () => {
    const t = await create();
    await sql`update templates set image_name = 'acme/again:3', body = body where id = ${t.id}`.execute(raw);
    assert.equal((await served(t.id, (r) => r.body.imageName !== templateBody().imageName)).body.imageName, 'acme/again:3');
  });

  test('a change of visibility made in SQL decides who sees the template', async () => {
    const t = await create({ isPublic: false });
    const other = await h.key('oscar');
    const seenByOther = () => h.call('GET', `/v1/templates/${t.id}?includePublicTemplates=true`, { key: other });
    assert.equal((await seenByOther()).status, 404);
    await sql`update templates set is_public = 1 where id = ${t.id}`.execute(raw);
    let seen = await seenByOther();
    await eventually('the visibility change is served', 1000, async () => {
      seen = await seenByOther();
      return seen.status === 200;
    });
    assert.equal(seen.body.isPublic, true);
  });

  test('the next update through the API starts from the row as SQL left it, and records the change', async () => {
    const t = await create({ readme: 'api' });
    await sql`update templates set readme = 'sql' where id = ${t.id}`.execute(raw);
    const updated = await h.call('POST', `/v1/templates/${t.id}/update`, { key, body: { readme: 'api again' } });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.revision, 2);
    const revisions = (await h.call('GET', `/v1/templates/${t.id}/revisions`, { key })).body;
    assert.deepEqual(revisions[0].diff, [{ field: 'readme', from: 'sql', to: 'api again' }]);
    assert.equal((await get(t.id)).body.readme, 'api again');
  });

  test('a category or flag no template can have is refused by the database; SQL that keeps to them is served by every page', async () => {
    const t = await create({ category: 'NVIDIA', isServerless: false });
    for (const change of [
      sql`category = 'TPU'`,
      sql`category = 'nvidia'`,
      sql`is_serverless = 2`,
      sql`is_public = -1`,
      sql`is_platform = 7`,
    ]) {
      await assert.rejects(sql`update templates set ${change} where id = ${t.id}`.execute(raw), /category|is_public|check/i);
    }
    const row = await raw.selectFrom('templates').selectAll().where('id', '=', t.id).executeTakeFirstOrThrow();
    const { seq: _seq, ...copy } = row;
    const inserted = (changes: Record<string, unknown>) =>
      raw
        .insertInto('templates')
        .values({ ...copy, id: `copy${String(Math.random()).slice(2, 14)}`, name: `copy ${Math.random()}`, ...changes })
        .execute();
    await assert.rejects(inserted({ category: 'GPU' }), /category|check/i);
    await assert.rejects(inserted({ is_serverless: 3 }), /category|is_public|check/i);
    assert.equal((await get(t.id)).body.category, 'NVIDIA', 'nothing was written');

    await sql`update templates set category = 'AMD', is_serverless = 1 where id = ${t.id}`.execute(raw);
    const page = () => h.call('GET', '/v1/templates?category=AMD&isServerless=true', { key });
    await eventually('the filtered page shows the row as SQL left it', 1000, async () =>
      (await page()).body.some((item: { id: string }) => item.id === t.id),
    );
  });

  test("the service's own writes keep their stored representation", async () => {
    const t = await create({ readme: 'kept' });
    await h.call('POST', `/v1/templates/${t.id}/update`, { key, body: { readme: 'kept twice' } });
    const { rows } = await sql<{ body: string | null }>`select body from templates where id = ${t.id}`.execute(raw);
    assert.equal(JSON.parse(rows[0]?.body as string).readme, 'kept twice');
  });
});
