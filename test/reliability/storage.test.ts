import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// Everything an account's requests make the server keep is bounded and counted against it (docs/reliability.md,
// "Bounds"): kept answers to Idempotency-Keys are references, not bodies, and their number has a quota; history
// (revisions, releases, undelivered webhooks) is counted by the database and has a quota; what describes a deleted
// template or endpoint goes with it.

const QUOTAS = { templates: 0, bytes: 0, endpoints: 0, registryAuths: 0, storedResponses: 5, historyBytes: 400_000 };

forEachDialect('what an account makes the server keep', (dialect) => {
  let h: Harness;
  let raw: Kysely<any>;
  before(async () => {
    h = await startHarness(dialect, { quotas: QUOTAS, history: { revisionsKept: 4, releasesKept: 3 } });
    raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
  });
  after(async () => {
    await raw.destroy();
    await h.close();
  });

  const rows = async (query: ReturnType<typeof sql<{ n: number | string }>>) => Number((await query.execute(raw)).rows[0]?.n ?? 0);
  /** The history bytes of `account`, as the triggers kept them and as the tables hold them now. */
  const history = async (account: string) => {
    const id = (await h.store.accounts.findByName(account))?.id as string;
    const kept = await rows(sql`select history_bytes as n from account_usage where account_id = ${id}`);
    const held = await rows(sql`select
        (select coalesce(sum(octet_length(r.snapshot) + octet_length(r.diff)), 0) from template_revisions r join templates t on t.id = r.template_id where t.owner_id = ${id})
      + (select coalesce(sum(octet_length(r.diff)), 0) from releases r join endpoints e on e.id = r.endpoint_id where e.owner_id = ${id})
      + (select coalesce(sum(octet_length(payload)), 0) from outbox where account_id = ${id}) as n`);
    return { kept, held };
  };

  test('rollbacks with fresh Idempotency-Keys keep references, not their bodies; a retry gets the same bytes', async () => {
    const key = await h.key('roller');
    const t = (await h.call('POST', '/v1/templates', { key, body: templateBody({ readme: 'x'.repeat(60_000) }) })).body;
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const r = await h.call('POST', `/v1/templates/${t.id}/rollback`, {
        key,
        body: { revision: 1 },
        headers: { 'idempotency-key': `k${i}` },
      });
      assert.equal(r.status, 200, r.text);
      answers.push(r.text);
    }
    const kept = await rows(sql`select sum(octet_length(body) + octet_length(answer) + octet_length(headers)) as n from idempotency_keys`);
    assert.ok(kept < 4 * 1000, `4 kept answers of a 60 KB template take ${kept} bytes`);
    const retry = await h.call('POST', `/v1/templates/${t.id}/rollback`, {
      key,
      body: { revision: 1 },
      headers: { 'idempotency-key': 'k2' },
    });
    assert.equal(retry.status, 200);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.text, answers[2], 'byte for byte');
  });

  test('kept answers have a quota: the sixth key is a 403 naming it, a retry of a kept one still answers', async () => {
    const key = await h.key('many-keys');
    const create = (k: string) =>
      h.call('POST', '/v1/templates', { key, body: templateBody({ name: `by key ${k}` }), headers: { 'idempotency-key': k } });
    for (let i = 0; i < 5; i++) assert.equal((await create(`key ${i}`)).status, 200);
    const refused = await create('key 5');
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.quota.name, 'QUOTA_IDEMPOTENCY_KEYS_PER_ACCOUNT');
    assert.equal(refused.body.quota.limit, 5);
    assert.equal((await h.call('GET', '/v1/templates?q=by%20key%205', { key })).body.length, 0, 'the refused write was rolled back');
    const retry = await create('key 3');
    assert.equal(retry.status, 200);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal((await h.call('POST', '/v1/templates', { key, body: templateBody() })).status, 200, 'writes without a key go on');
  });

  test('a retry whose template was deleted since is a 409 naming the key: the write is never done twice', async () => {
    const key = await h.key('deleter');
    const headers = { 'idempotency-key': 'once' };
    const body = templateBody({ env: { TOKEN: 'kept-nowhere-after-delete' } });
    const first = await h.call('POST', '/v1/templates', { key, body, headers });
    assert.equal((await h.call('DELETE', `/v1/templates/${first.body.id}`, { key })).status, 204);
    const retry = await h.call('POST', '/v1/templates', { key, body, headers });
    assert.equal(retry.status, 409, retry.text);
    assert.deepEqual(retry.body.errors, [
      { in: 'header', path: '/idempotency-key', message: 'answered a request whose answer is no longer kept' },
    ]);
    assert.equal(await rows(sql`select count(*) as n from idempotency_keys where answer like '%kept-nowhere-after-delete%'`), 0);
    assert.equal((await h.call('GET', `/v1/templates?q=${encodeURIComponent(body.name)}`, { key })).body.length, 0, 'not created again');
  });

  test('history is counted by the database as the tables hold it, through creates, changes, rebinds and deletes', async () => {
    const key = await h.key('historian');
    const [a, b] = await Promise.all(
      ['a', 'b'].map(
        async (n) => (await h.call('POST', '/v1/templates', { key, body: templateBody({ name: `hist ${n}`, isServerless: true }) })).body,
      ),
    );
    const e = (await h.call('POST', '/v1/endpoints', { key, body: { name: 'hist', templateId: a.id } })).body;
    for (let i = 0; i < 6; i++)
      assert.equal((await h.call('PATCH', `/v1/templates/${a.id}`, { key, body: { readme: `r${i}`.repeat(100) } })).status, 200);
    assert.equal((await h.call('POST', `/v1/templates/${a.id}/rollback`, { key, body: { revision: 5 } })).status, 200);
    assert.equal((await h.call('PATCH', `/v1/endpoints/${e.id}`, { key, body: { templateId: b.id } })).status, 200);
    let counted = await history('historian');
    assert.ok(counted.kept > 0);
    assert.equal(counted.kept, counted.held);
    assert.equal((await h.call('DELETE', `/v1/endpoints/${e.id}`, { key })).status, 204);
    assert.equal((await h.call('DELETE', `/v1/templates/${a.id}`, { key })).status, 204);
    counted = await history('historian');
    assert.equal(counted.kept, counted.held);
    assert.equal((await h.call('DELETE', `/v1/templates/${b.id}`, { key })).status, 204);
    assert.deepEqual(await history('historian'), { kept: 0, held: 0 });
  });

  test('history has a quota: a change past it is a 403 naming it, and nothing of it stays', async () => {
    const key = await h.key('hoarder');
    const t = (await h.call('POST', '/v1/templates', { key, body: templateBody({ readme: 'a'.repeat(90_000) }) })).body;
    let refused: Awaited<ReturnType<Harness['call']>> | undefined;
    for (let i = 0; i < 10 && !refused; i++) {
      const r = await h.call('PATCH', `/v1/templates/${t.id}`, { key, body: { readme: String(i).repeat(90_000) } });
      if (r.status !== 200) refused = r;
    }
    assert.equal(refused?.status, 403, refused?.text);
    assert.equal(refused?.body.quota.name, 'QUOTA_HISTORY_BYTES_PER_ACCOUNT');
    assert.equal(refused?.body.quota.limit, 400_000);
    const counted = await history('hoarder');
    assert.equal(counted.kept, counted.held, 'the refused change left nothing behind');
    assert.ok(counted.kept <= 400_000);
  });

  test('a deleted template leaves no value behind: its releases and their webhooks go, delivered or not', async () => {
    const key = await h.key('leaver');
    const secret = 'env-value-of-a-deleted-template';
    const t = (await h.call('POST', '/v1/templates', { key, body: templateBody({ isServerless: true }) })).body;
    const other = (await h.call('POST', '/v1/templates', { key, body: templateBody({ isServerless: true }) })).body;
    const e = (await h.call('POST', '/v1/endpoints', { key, body: { name: 'leaving', templateId: t.id } })).body;
    assert.equal((await h.call('PATCH', `/v1/templates/${t.id}`, { key, body: { env: { TOKEN: secret } } })).status, 200);
    await sql`update outbox set delivered_at = ${new Date().toISOString()} where ordering_key = ${e.id} and seq = (select min(seq) from outbox where ordering_key = ${e.id})`.execute(
      raw,
    );
    assert.equal((await h.call('PATCH', `/v1/templates/${t.id}`, { key, body: { env: { TOKEN: `${secret} 2` } } })).status, 200);
    assert.equal((await h.call('PATCH', `/v1/endpoints/${e.id}`, { key, body: { templateId: other.id } })).status, 200);
    const holding = () =>
      rows(
        sql`select (select count(*) from outbox where payload like ${`%${secret}%`}) + (select count(*) from releases where diff like ${`%${secret}%`}) as n`,
      );
    assert.ok((await holding()) > 0, 'while the template is there, its releases say what changed');
    assert.equal((await h.call('DELETE', `/v1/templates/${t.id}`, { key })).status, 204);
    assert.equal(await holding(), 0);
    const releases = (await h.call('GET', `/v1/endpoints/${e.id}/releases`, { key })).body;
    assert.deepEqual(
      releases.map((r: { templateId: string }) => r.templateId),
      [other.id],
      'the endpoint keeps the release of the template it runs now',
    );
  });

  test('a delivered webhook keeps no payload, and its bytes leave the account', async () => {
    const key = await h.key('delivered');
    const t = (await h.call('POST', '/v1/templates', { key, body: templateBody({ isServerless: true, readme: 'r'.repeat(5000) }) })).body;
    await h.call('POST', '/v1/endpoints', { key, body: { name: 'delivered', templateId: t.id } });
    assert.equal((await h.call('PATCH', `/v1/templates/${t.id}`, { key, body: { readme: 'changed' } })).status, 200);
    const before = await history('delivered');
    const claimed = await h.store.transaction((tx) =>
      tx.outbox.claimDue(new Date(Date.now() + 1000).toISOString(), new Date(Date.now() + 60_000).toISOString(), 'lease', 100),
    );
    const event = claimed.find((e) => e.payload.includes(t.id));
    assert.ok(event);
    assert.ok(await h.store.transaction((tx) => tx.outbox.markDelivered(event.seq, 'lease', new Date().toISOString())));
    assert.equal(await rows(sql`select octet_length(payload) as n from outbox where seq = ${event.seq}`), 0);
    const after = await history('delivered');
    assert.equal(after.kept, after.held);
    assert.equal(before.kept - after.kept, Buffer.byteLength(event.payload));
  });
});
