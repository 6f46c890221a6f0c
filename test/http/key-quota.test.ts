import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { Housekeeping } from '../../src/usecases/housekeeping.ts';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';

// API keys are bounded per account (QUOTA_API_KEYS_PER_ACCOUNT): revoked and expired keys count for 30 days, then
// housekeeping forgets them, so a loop of creates and revokes over the API keeps at most the quota's rows. A key that
// history names as a revision's author is kept (not counted) while the revision is.

const DAY = 24 * 60 * 60 * 1000;
const QUOTA_TYPE = 'https://podplate.dev/problems/quota-exceeded';
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

forEachDialect('API keys per account', (dialect) => {
  let h: Harness;
  let raw: Kysely<any>;
  let platform: string;
  before(async () => {
    h = await startHarness(dialect, { quotas: { templates: 0, bytes: 0, endpoints: 0, registryAuths: 0, apiKeys: 3 } });
    raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
    platform = await h.key('ops', 'platform');
  });
  after(async () => {
    await raw.destroy();
    await h.close();
  });

  const makeKey = (account: string, key = platform) => h.call('POST', `/v1/accounts/${account}/keys`, { key, body: {} });
  const revoke = (account: string, id: string) => h.call('DELETE', `/v1/accounts/${account}/keys/${id}`, { key: platform });
  const rows = async (account: string) =>
    Number(
      (
        await sql<{
          n: number;
        }>`select count(*) as n from api_keys join accounts on accounts.id = api_keys.account_id where accounts.name = ${account}`.execute(
          raw,
        )
      ).rows[0]?.n,
    );

  test('concurrent creates stop at the quota; revoked keys count until housekeeping forgets them', async () => {
    assert.equal((await h.call('POST', '/v1/accounts', { key: platform, body: { name: 'rota' } })).status, 201);
    const replies = await Promise.all(Array.from({ length: 8 }, () => makeKey('rota')));
    assert.deepEqual(replies.map((r) => r.status).sort(), [201, 201, 201, 403, 403, 403, 403, 403]);
    const refused = replies.find((r) => r.status === 403);
    assert.equal(refused?.body.type, QUOTA_TYPE);
    assert.deepEqual(refused?.body.quota, { name: 'QUOTA_API_KEYS_PER_ACCOUNT', limit: 3, used: 3 });
    assert.match(refused?.body.detail, /^This account has 3 API keys .*30 days after.*at most 3\./);

    // A user key is held to its own account's quota too, and revoking makes no room at once.
    const made = replies.filter((r) => r.status === 201).map((r) => r.body);
    assert.equal((await makeKey('rota', made[0].key)).status, 403);
    assert.equal((await revoke('rota', made[1].id)).status, 204);
    assert.equal((await makeKey('rota')).status, 403, 'a revoked key counts until it is forgotten');
    assert.equal(await rows('rota'), 3);

    // Housekeeping forgets keys revoked more than 30 days ago (and their use); then there is room for one.
    await sql`update api_keys set revoked_at = ${ago(31 * DAY)} where id = ${made[1].id}`.execute(raw);
    const swept = await new Housekeeping(h.store, { outboxRetentionDays: 7 }).run();
    assert.equal(swept?.forgottenKeys, 1);
    assert.equal(await rows('rota'), 2);
    assert.equal((await h.call('GET', '/v1/me', { key: made[1].key })).status, 401, 'a forgotten key stays refused');
    assert.equal((await makeKey('rota')).status, 201);
    assert.equal((await makeKey('rota')).status, 403);
  });

  test('housekeeping forgets keys ended over 30 days ago, never an active, recently ended or history-named one', async () => {
    assert.equal((await h.call('POST', '/v1/accounts', { key: platform, body: { name: 'keeper' } })).status, 201);
    const keys = [];
    for (let i = 0; i < 3; i++) keys.push((await makeKey('keeper')).body);
    // The third key writes a template (its first revision names it), then is revoked long ago.
    const made = await h.call('POST', '/v1/templates', { key: keys[2].key, body: { name: 'authored', imageName: 'ubuntu' } });
    assert.equal(made.status, 200, made.text);
    await sql`update api_keys set revoked_at = ${ago(40 * DAY)} where id = ${keys[2].id}`.execute(raw);
    await h.call('GET', '/v1/me', { key: keys[0].key }); // a use noted, so a row in api_key_uses refers to the key
    await h.podplate.keys.usesWritten();
    await sql`update api_keys set expires_at = ${ago(40 * DAY)} where id = ${keys[0].id}`.execute(raw);
    await sql`update api_keys set revoked_at = ${ago(29 * DAY)} where id = ${keys[1].id}`.execute(raw);
    const swept = await new Housekeeping(h.store, { outboxRetentionDays: 7 }).run();
    assert.equal(swept?.forgottenKeys, 1);
    const left = (
      await sql<{ id: string }>`select id from api_keys where id in (${sql.join(keys.map((k) => k.id))}) order by id`.execute(raw)
    ).rows;
    assert.deepEqual(
      left.map((r) => r.id),
      [keys[1].id, keys[2].id].sort(),
    );
    // The long-ended keys no longer count (the one revoked 29 days ago still does): two more fit a quota of 3. History
    // still names the kept key's account as the author.
    const reader = await makeKey('keeper');
    assert.equal(reader.status, 201);
    const history = await h.call('GET', `/v1/templates/${made.body.id}/revisions`, { key: reader.body.key });
    assert.equal(history.body[0]?.author, 'keeper', history.text);
    assert.equal((await makeKey('keeper')).status, 201);
    assert.equal((await makeKey('keeper')).status, 403);
  });
});
