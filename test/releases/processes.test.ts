// Two server processes on one PostgreSQL database deliver each release once: the outbox's claim holds across processes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Database, DIALECTS, freshDatabase } from '../support/harness.ts';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';
import { eventually, Receiver, SECRET } from '../support/receiver.ts';

describe('two processes on one PostgreSQL database', {
  skip: DIALECTS.includes('postgres') ? false : 'TEST_DATABASE_URL is not set',
}, () => {
  let db: Database;
  let receiver: Receiver;
  let servers: ServerProcess[] = [];
  before(async () => {
    db = await freshDatabase('postgres');
    receiver = new Receiver(SECRET);
    receiver.delayMs = 100;
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await receiver.close();
    await db.drop();
  });

  test('deliver each release, never the same one twice at the same time', async () => {
    const port = await receiver.listen();
    const env = {
      DATABASE_URL: db.url,
      RELEASE_WEBHOOK_URL: `http://127.0.0.1:${port}/hooks`,
      RELEASE_WEBHOOK_SECRET: SECRET,
      RELEASE_RETRY_BASE_MS: '50',
      RELEASE_RETRY_MAX_MS: '200',
      OUTBOX_POLL_MS: '10',
    };
    servers = await Promise.all([startServer(env), startServer(env)]);
    const key = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
    const call = async (i: number, method: string, path: string, body?: unknown) =>
      (
        await fetch(`${servers[i % 2]?.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        })
      ).json();
    const releaseIds: string[] = [];
    for (let n = 0; n < 4; n++) {
      const t = await call(n, 'POST', '/v1/templates', { name: `pg ${n}`, imageName: 'ubuntu', isServerless: true });
      const e = await call(n, 'POST', '/v1/endpoints', { name: `pg ${n}`, templateId: t.id });
      await Promise.all(Array.from({ length: 5 }, (_, i) => call(i, 'PATCH', `/v1/templates/${t.id}`, { env: { N: String(i) } })));
      releaseIds.push(...(await call(n, 'GET', `/v1/endpoints/${e.id}/releases`)).map((r: { id: string }) => `evt_${r.id}`));
    }
    assert.equal(releaseIds.length, 20);
    await eventually(() => releaseIds.every((id) => receiver.ids().has(id)), 'every release delivered');
    assert.deepEqual(receiver.overlapping, [], 'no event was being delivered by two processes at once');
    assert.ok(receiver.received.every((r) => r.verified));
    assert.equal(receiver.received.length, receiver.ids().size, 'and, with a healthy receiver, each exactly once');
  });
});
