import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { type Quotas, templateBytes } from '../../src/domain/quota.ts';
import { newTemplateContent } from '../../src/domain/template.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// Quotas per account: templates, their bytes, endpoints. A write that would take an account past one is a 403
// problem of type quota-exceeded naming the quota, its limit and the use; concurrent creates never overshoot.

const QUOTAS: Quotas = { templates: 10, bytes: 200_000, endpoints: 2, registryAuths: 3 };
const QUOTA_TYPE = 'https://podplate.dev/problems/quota-exceeded';

forEachDialect('quotas', (dialect) => {
  let h: Harness;
  let raw: Kysely<any>;
  before(async () => {
    h = await startHarness(dialect, { quotas: QUOTAS });
    raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
  });
  after(async () => {
    await raw.destroy();
    await h.close();
  });

  const create = (key: string, overrides: Record<string, unknown> = {}) =>
    h.call('POST', '/v1/templates', { key, body: templateBody(overrides) });

  test('50 concurrent creates against a quota of 10: exactly 10 land, 40 are refused naming the quota', async () => {
    const key = await h.key('crowd');
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => create(key, { name: `crowd ${i}` })));
    const statuses = replies.map((r) => r.status).sort();
    assert.deepEqual(statuses, [...Array(10).fill(200), ...Array(40).fill(403)]);
    const refused = replies.find((r) => r.status === 403);
    assert.equal(refused?.body.type, QUOTA_TYPE);
    assert.equal(refused?.body.title, 'Quota exceeded');
    assert.deepEqual(refused?.body.quota, { name: 'QUOTA_TEMPLATES_PER_ACCOUNT', limit: 10, used: 10 });
    assert.equal(refused?.body.detail, 'This account has 10 templates; an account may have at most 10. Delete some to make room.');
    const listed = await h.call('GET', '/v1/templates?limit=100', { key });
    assert.equal(listed.body.length, 10);
    // Deleting one makes room for one.
    await h.call('DELETE', `/v1/templates/${listed.body[0].id}`, { key });
    assert.equal((await create(key, { name: 'room again' })).status, 200);
    assert.equal((await create(key, { name: 'one too many' })).status, 403);
  });

  test("one account's quota is its own", async () => {
    const key = await h.key('neighbour');
    assert.equal((await create(key)).status, 200);
  });

  test('bytes: a create or an update that would pass the quota is refused; one that shrinks never is', async () => {
    const key = await h.key('writer');
    const big = (n: number) => ({ readme: 'x'.repeat(n) });
    const first = await create(key, { name: 'first', ...big(90_000) });
    assert.equal(first.status, 200);
    const second = await create(key, { name: 'second', ...big(90_000) });
    assert.equal(second.status, 200);
    const third = await create(key, { name: 'third', ...big(30_000) });
    assert.equal(third.status, 403);
    assert.equal(third.body.quota.name, 'QUOTA_BYTES_PER_ACCOUNT');
    assert.equal(third.body.quota.limit, 200_000);
    const used = third.body.quota.used;
    const expected = [first.body, second.body].reduce((sum, t) => sum + templateBytes(t), 0);
    assert.equal(used, expected, 'the use is what the two templates take');
    const grow = await h.call('PATCH', `/v1/templates/${first.body.id}`, { key, body: { env: { BIG: 'z'.repeat(30_000) } } });
    assert.equal(grow.status, 403);
    assert.equal(grow.body.quota.name, 'QUOTA_BYTES_PER_ACCOUNT');
    assert.deepEqual((await h.call('GET', `/v1/templates/${first.body.id}`, { key })).body.env, {}, 'nothing changed');
    const shrink = await h.call('PATCH', `/v1/templates/${first.body.id}`, { key, body: big(10) });
    assert.equal(shrink.status, 200);
    assert.equal((await create(key, { name: 'third', ...big(30_000) })).status, 200);
  });

  test('endpoints: the third of a quota of two is refused, and deleting one makes room', async () => {
    const key = await h.key('binder');
    const serverless = await Promise.all([0, 1, 2].map((i) => create(key, { name: `worker ${i}`, isServerless: true })));
    const bind = (i: number) => h.call('POST', '/v1/endpoints', { key, body: { name: `ep ${i}`, templateId: serverless[i]?.body.id } });
    assert.equal((await bind(0)).status, 200);
    const second = await bind(1);
    assert.equal(second.status, 200);
    const third = await bind(2);
    assert.equal(third.status, 403);
    assert.deepEqual(third.body.quota, { name: 'QUOTA_ENDPOINTS_PER_ACCOUNT', limit: 2, used: 2 });
    const template = await h.call('GET', `/v1/templates/${serverless[2]?.body.id}`, { key });
    assert.equal(template.status, 200, 'the template was not left bound');
    await h.call('DELETE', `/v1/endpoints/${second.body.id}`, { key });
    assert.equal((await bind(2)).status, 200);
  });

  test('registry auths: 20 concurrent creates against a quota of 3 leave exactly 3; deleting one makes room', async () => {
    const key = await h.key('auths');
    const createAuth = (name: string) =>
      h.call('POST', '/v1/containerregistryauth', { key, body: { name, username: 'u'.repeat(255), password: 'p'.repeat(16_384) } });
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => createAuth(`registry ${i}`)));
    assert.deepEqual(replies.map((r) => r.status).sort(), [...Array(3).fill(200), ...Array(17).fill(403)]);
    const refused = replies.find((r) => r.status === 403);
    assert.equal(refused?.body.type, QUOTA_TYPE);
    assert.deepEqual(refused?.body.quota, { name: 'QUOTA_REGISTRY_AUTHS_PER_ACCOUNT', limit: 3, used: 3 });
    assert.equal(refused?.body.detail, 'This account has 3 registry auths; an account may have at most 3. Delete one to make room.');
    const listed = await h.call('GET', '/v1/containerregistryauth', { key });
    assert.equal(listed.body.length, 3, 'exactly the quota is stored');
    assert.equal((await h.call('DELETE', `/v1/containerregistryauth/${listed.body[0].id}`, { key })).status, 204);
    assert.equal((await createAuth('room again')).status, 200);
    assert.equal((await createAuth('one too many')).status, 403);
    // Another account's quota is its own.
    const other = await h.key('auths-neighbour');
    const mine = await h.call('POST', '/v1/containerregistryauth', { key: other, body: { name: 'r', username: 'u', password: 'p' } });
    assert.equal(mine.status, 200);
  });

  test('the use follows every writer: rows inserted and deleted by plain SQL count too', async () => {
    const key = await h.key('operated');
    const mine = await create(key, { name: 'mine' });
    const ownerId = (await sql<{ owner_id: string }>`select owner_id from templates where id = ${mine.body.id}`.execute(raw)).rows[0]
      ?.owner_id;
    const usage = async () =>
      (
        await sql<{
          templates: number;
          template_bytes: number;
        }>`select templates, template_bytes from account_usage where account_id = ${ownerId}`.execute(raw)
      ).rows[0];
    assert.equal(Number((await usage())?.templates), 1);
    assert.equal(Number((await usage())?.template_bytes), templateBytes(mine.body));
    await sql`update templates set readme = ${'y'.repeat(1000)} where id = ${mine.body.id}`.execute(raw);
    assert.equal(Number((await usage())?.template_bytes), templateBytes({ ...mine.body, readme: 'y'.repeat(1000) }));
    await sql`delete from templates where id = ${mine.body.id}`.execute(raw);
    assert.deepEqual([Number((await usage())?.templates), Number((await usage())?.template_bytes)], [0, 0]);
  });

  test('the use follows statements of many rows and several accounts: copies, moves between owners, bulk deletes', async () => {
    const [a, b] = [await h.key('bulk-a'), await h.key('bulk-b')];
    const made = [
      await create(a, { name: 'a1' }),
      await create(a, { name: 'a2', readme: 'r'.repeat(500) }),
      await create(b, { name: 'b1' }),
    ];
    const ids = made.map((r) => r.body.id as string);
    const ownerOf = async (id: string) =>
      (await sql<{ owner_id: string }>`select owner_id from templates where id = ${id}`.execute(raw)).rows[0]?.owner_id as string;
    const owners = [await ownerOf(ids[0] as string), await ownerOf(ids[2] as string)];
    // What the triggers kept, and what a recount from the rows says, for both accounts.
    const kept = async () =>
      (
        await sql<{ account_id: string; templates: number; template_bytes: number }>`select account_id, templates, template_bytes
          from account_usage where account_id in (${sql.join(owners)}) order by account_id`.execute(raw)
      ).rows.map((r) => [r.account_id, Number(r.templates), Number(r.template_bytes)]);
    const expected = async () =>
      (
        await sql<{ account_id: string; templates: number; bytes: number }>`select o.id as account_id, count(t.id) as templates,
          coalesce(sum(octet_length(t.name) + octet_length(t.image_name) + octet_length(t.volume_mount_path)
            + octet_length(t.container_registry_auth_id) + octet_length(t.docker_entrypoint) + octet_length(t.docker_start_cmd)
            + octet_length(t.env) + octet_length(t.ports) + octet_length(t.readme) + 512), 0) as bytes
          from accounts o left join templates t on t.owner_id = o.id where o.id in (${sql.join(owners)}) group by o.id order by o.id`.execute(
          raw,
        )
      ).rows.map((r) => [r.account_id, Number(r.templates), Number(r.bytes)]);
    assert.deepEqual(await kept(), await expected());
    // Copies of every template of both accounts in one statement.
    await sql`insert into templates (id, owner_id, name, image_name, category, container_disk_in_gb, volume_in_gb, volume_mount_path,
        container_registry_auth_id, docker_entrypoint, docker_start_cmd, env, ports, readme, is_public, is_platform, is_serverless,
        earned, runtime_in_min, revision, created_at, updated_at, search)
      select id || 'c', owner_id, name || ' copy', image_name, category, container_disk_in_gb, volume_in_gb, volume_mount_path,
        container_registry_auth_id, docker_entrypoint, docker_start_cmd, env, ports, readme, is_public, is_platform, is_serverless,
        earned, runtime_in_min, revision, created_at, updated_at, search
      from templates where id in (${sql.join(ids)})`.execute(raw);
    assert.deepEqual(await kept(), await expected());
    // Every template of the first account moves to the second, and the second's grow, in one statement each.
    await sql`update templates set owner_id = ${owners[1]} where owner_id = ${owners[0]}`.execute(raw);
    assert.deepEqual(await kept(), await expected());
    await sql`update templates set readme = readme || 'more' where owner_id in (${sql.join(owners)})`.execute(raw);
    assert.deepEqual(await kept(), await expected());
    // A statement that changes nothing they hold leaves both as they were.
    await sql`update templates set runtime_in_min = runtime_in_min + 5 where owner_id in (${sql.join(owners)})`.execute(raw);
    assert.deepEqual(await kept(), await expected());
    await sql`delete from templates where owner_id in (${sql.join(owners)}) and name like '%copy'`.execute(raw);
    assert.deepEqual(await kept(), await expected());
  });

  test('the bytes the database counts are the bytes domain/quota.ts templateBytes says, for any text', async () => {
    const key = await h.key('unicode');
    const content = {
      name: 'ünïcødé ✓ 名前 \u{1F680}',
      env: { A: 'é"\\\n', EMPTY: '' },
      ports: ['22/tcp'],
      dockerEntrypoint: ['sh', '-c', 'echo "é"'],
      dockerStartCmd: [],
      readme: '# 名前\n\u0001',
      volumeMountPath: '/données',
    };
    const r = await create(key, content);
    assert.equal(r.status, 200, r.text);
    const ownerId = (await sql<{ owner_id: string }>`select owner_id from templates where id = ${r.body.id}`.execute(raw)).rows[0]
      ?.owner_id;
    const row = (await sql<{ template_bytes: number }>`select template_bytes from account_usage where account_id = ${ownerId}`.execute(raw))
      .rows[0];
    assert.equal(Number(row?.template_bytes), templateBytes(newTemplateContent({ ...content, imageName: r.body.imageName })));
  });
});

test('a quota of 0 is off', async () => {
  const h = await startHarness('sqlite', { quotas: { templates: 0, bytes: 0, endpoints: 0, registryAuths: 0 } });
  try {
    const key = await h.key('free');
    for (let i = 0; i < 12; i++) assert.equal((await h.call('POST', '/v1/templates', { key, body: templateBody() })).status, 200);
    for (let i = 0; i < 5; i++) {
      const auth = { name: `free ${i}`, username: 'u', password: 'p' };
      assert.equal((await h.call('POST', '/v1/containerregistryauth', { key, body: auth })).status, 200);
    }
  } finally {
    await h.close();
  }
});
