import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createPodplateClient, PodplateConnectionError, PodplateProblem, toArray } from 'podplate/client';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { freePort, podplate, type ServerProcess, startServer } from '../support/process.ts';

const image = 'runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04';

forEachDialect('the typed client (imported as podplate/client)', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  let apiKey: string;
  let platformKey: string;
  before(async () => {
    db = await freshDatabase(dialect);
    const env = { DATABASE_URL: db.url };
    apiKey = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
    platformKey = podplate(['keys', 'create', '--user', 'ops', '--role', 'platform'], env).stdout.trim();
    server = await startServer(env);
  });
  after(async () => {
    await server.stop();
    await db.drop();
  });

  test('creates, reads, updates conditionally, rolls back and deletes a template', async () => {
    const client = createPodplateClient({ url: server.url, apiKey });
    const created = await client.createTemplate({ name: 'client one', imageName: image, ports: ['8888/http'] });
    assert.equal(created.value.revision, 1);
    assert.equal(created.etag, '"r1"');
    const got = await client.getTemplate(created.value.id);
    assert.deepEqual(got.value, created.value);

    const updated = await client.updateTemplate(created.value.id, { imageName: 'runpod/pytorch:2.2.0' }, { ifMatch: got.etag });
    assert.equal(updated.value.imageName, 'runpod/pytorch:2.2.0');
    assert.equal(updated.value.ports[0], '8888/http', 'absent fields keep their value');
    assert.equal(updated.etag, '"r2"');

    const stale = await client.updateTemplate(created.value.id, { readme: 'x' }, { ifMatch: '"r1"' }).catch((e) => e);
    assert.ok(stale instanceof PodplateProblem);
    assert.equal(stale.status, 412);

    const revisions = await toArray(client.listRevisions(created.value.id));
    assert.deepEqual(
      revisions.map((r) => r.revision),
      [2, 1],
    );
    const rolled = await client.rollbackTemplate(created.value.id, 1);
    assert.equal(rolled.value.imageName, image);
    assert.equal(rolled.value.revision, 3);

    await client.deleteTemplate(created.value.id);
    const gone = await client.getTemplate(created.value.id).catch((e) => e);
    assert.ok(gone instanceof PodplateProblem);
    assert.equal(gone.status, 404);
  });

  test('a problem is thrown typed, naming each bad field', async () => {
    const client = createPodplateClient({ url: server.url, apiKey });
    const error = await client.createTemplate({ name: 'bad', imageName: 'RunPod/PyTorch', ports: ['8888/udp'] }).catch((e) => e);
    assert.ok(error instanceof PodplateProblem);
    assert.equal(error.status, 400);
    assert.equal(error.type, 'https://podplate.dev/problems/invalid-request');
    assert.deepEqual(error.errors.map((e) => e.path).sort(), ['/imageName', '/ports/0']);

    const unauthenticated = await toArray(createPodplateClient({ url: server.url, apiKey: 'pp_nope' }).listTemplates()).catch((e) => e);
    assert.ok(unauthenticated instanceof PodplateProblem);
    assert.equal(unauthenticated.status, 401);
  });

  test('a platform key provisions an account and a read-only key; the user lists and revokes it', async () => {
    const platform = createPodplateClient({ url: server.url, apiKey: platformKey });
    const account = await platform.createAccount({ name: 'bea' });
    assert.equal(account.role, 'user');
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const made = await platform.createApiKey('bea', { label: 'dashboard', access: 'read', expiresAt });
    assert.deepEqual([made.access, made.expiresAt, made.label], ['read', expiresAt, 'dashboard']);
    const bea = createPodplateClient({ url: server.url, apiKey: made.key });
    assert.equal((await bea.me()).keyAccess, 'read');
    const listed = await bea.listApiKeys('bea');
    assert.deepEqual(
      listed.map((k) => k.id),
      [made.id],
    );
    const refused = await bea.createTemplate({ name: 'nope', imageName: image }).catch((e) => e);
    assert.ok(refused instanceof PodplateProblem);
    assert.equal(refused.status, 403);
    await platform.revokeApiKey('bea', made.id);
    const revoked = await bea.me().catch((e) => e);
    assert.equal(revoked.status, 401);
  });

  test('listTemplates follows Link pages to the end', async () => {
    const client = createPodplateClient({ url: server.url, apiKey });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await client.createTemplate({ name: `paged ${i}`, imageName: image })).value.id);
    const first = await client.listTemplatesPage({ q: 'paged', limit: 2 });
    assert.equal(first.items.length, 2);
    assert.ok(first.next);
    const all = await toArray(client.listTemplates({ q: 'paged', limit: 2 }));
    assert.deepEqual(
      all.map((t) => t.id),
      ids.reverse(),
    );
  });

  test('an unreachable service is a PodplateConnectionError', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const error = await createPodplateClient({ url, apiKey })
      .getTemplate('abc')
      .catch((e) => e);
    assert.ok(error instanceof PodplateConnectionError);
    assert.match(error.message, /cannot reach http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/);
    assert.throws(() => createPodplateClient({ url: 'podplate.example.com', apiKey }), /the service URL must be an http\(s\) URL/);
  });
});
