import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// History is bounded: a template keeps its newest REVISIONS_KEPT_PER_TEMPLATE revisions and an endpoint its newest
// RELEASES_KEPT_PER_ENDPOINT releases, whatever made them, the older ones pruned in the transaction of the change that
// passes the bound, with their webhooks delivered or not; an unfinished release is never pruned.

const KEPT = { revisionsKept: 5, releasesKept: 3 };

forEachDialect('bounded history', (dialect) => {
  let h: Harness;
  let raw: Kysely<any>;
  let alice: string;
  before(async () => {
    h = await startHarness(dialect, { history: KEPT });
    raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
    alice = await h.key('alice');
  });
  after(async () => {
    await raw.destroy();
    await h.close();
  });

  const patch = (id: string, body: Record<string, unknown>) => h.call('PATCH', `/v1/templates/${id}`, { key: alice, body });
  const stored = async (table: string, column: string, value: string) =>
    Number(
      (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where ${sql.ref(column)} = ${value}`.execute(raw)).rows[0]?.n,
    );

  test('20 updates alternating a 90 KB readme keep the newest 5 revisions, and the list ends there', async () => {
    const t = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody() })).body;
    for (let i = 0; i < 20; i++) {
      const r = await patch(t.id, { readme: i % 2 === 0 ? 'x'.repeat(90_000) : `short ${i}` });
      assert.equal(r.status, 200, r.text);
    }
    const listed = await h.call('GET', `/v1/templates/${t.id}/revisions?limit=100`, { key: alice });
    assert.deepEqual(
      listed.body.map((r: { revision: number }) => r.revision),
      [21, 20, 19, 18, 17],
    );
    assert.equal(listed.headers.link, undefined, 'no page beyond the oldest kept');
    assert.equal(await stored('template_revisions', 'template_id', t.id), 5, 'the older ones are gone from the database');
    assert.equal(listed.body[4].template.readme, 'short 15', 'each kept revision is still a full snapshot');
    assert.deepEqual(listed.body[4].diff, [{ field: 'readme', from: 'x'.repeat(90_000), to: 'short 15' }]);
  });

  test('a rollback to a revision no longer kept is a 409 naming /revision; to a kept one it works', async () => {
    const t = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ readme: 'v1' }) })).body;
    for (let i = 2; i <= 8; i++) assert.equal((await patch(t.id, { readme: `v${i}` })).status, 200);
    const gone = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 2 } });
    assert.equal(gone.status, 409, gone.text);
    assert.equal(gone.body.type, 'https://podplate.dev/problems/conflict');
    assert.deepEqual(gone.body.errors, [
      { in: 'body', path: '/revision', message: 'is no longer kept (this template keeps revisions 4 to 8)' },
    ]);
    assert.match(gone.body.detail, /Revision 2 is no longer kept/);
    const never = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 9 } });
    assert.equal(never.status, 400, 'a revision that never was is still a 400');
    const back = await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: alice, body: { revision: 4 } });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.readme, 'v4');
    assert.equal(back.body.revision, 9);
  });

  test('releases: the newest 3 are kept, their webhooks delivered or not; the pruned take their events along', async () => {
    const t = (await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ isServerless: true }) })).body;
    const e = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'ep', templateId: t.id } })).body;
    for (let i = 0; i < 6; i++) assert.equal((await patch(t.id, { readme: `r${i}` })).status, 200);
    const releases = async () =>
      (await h.call('GET', `/v1/endpoints/${e.id}/releases`, { key: alice })).body.map((r: { version: number }) => r.version);
    assert.deepEqual(await releases(), [7, 6, 5], 'no webhook was delivered, and still only the newest 3 are kept');
    assert.equal(await stored('outbox', 'ordering_key', e.id), 3, 'with their events, undelivered');
    await sql`update outbox set delivered_at = ${new Date().toISOString()} where ordering_key = ${e.id}`.execute(raw);
    assert.equal((await patch(t.id, { readme: 'after delivery' })).status, 200);
    assert.deepEqual(await releases(), [8, 7, 6], 'the newest 3; the newest, pending and undelivered, among them');
    assert.equal(await stored('outbox', 'ordering_key', e.id), 3, 'the pruned releases take their events along');
    assert.equal(await stored('releases', 'endpoint_id', e.id), 3);
  });

  test('rebinds count toward the kept releases like any change: 20 switches between two templates keep 3', async () => {
    const [a, b] = await Promise.all(
      ['rebind a', 'rebind b'].map(
        async (name) => (await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ name, isServerless: true }) })).body,
      ),
    );
    const e = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'switching', templateId: a.id } })).body;
    for (let i = 0; i < 20; i++) {
      const r = await h.call('PATCH', `/v1/endpoints/${e.id}`, { key: alice, body: { templateId: i % 2 === 0 ? b.id : a.id } });
      assert.equal(r.status, 200, r.text);
    }
    assert.equal(await stored('releases', 'endpoint_id', e.id), 3);
    assert.equal(await stored('outbox', 'ordering_key', e.id), 3);
  });
});
