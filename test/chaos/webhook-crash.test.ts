import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Database, freshDatabase } from '../support/harness.ts';
import { freePort, podplate, type ServerProcess, startServer } from '../support/process.ts';
import { eventually, Receiver, SECRET } from '../support/receiver.ts';

// The chaos tier (npm run test:chaos): a process SIGKILLed between a release's commit and its webhook's delivery.
// Delivery is at least once: the next process sends what the dead one had not.

describe('at least once across a crash', () => {
  let db: Database;
  let receiver: Receiver;
  before(async () => {
    db = await freshDatabase('sqlite');
    receiver = new Receiver(SECRET);
  });
  after(async () => {
    await receiver.close();
    await db.drop();
  });

  test('a process killed between commit and delivery delivers after restart', async () => {
    const port = await freePort();
    const env = {
      DATABASE_URL: db.url,
      RELEASE_WEBHOOK_URL: `http://127.0.0.1:${port}/hooks`,
      RELEASE_WEBHOOK_SECRET: SECRET,
      RELEASE_RETRY_BASE_MS: '100',
      RELEASE_RETRY_MAX_MS: '500',
      OUTBOX_POLL_MS: '50',
    };
    const key = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
    const first = await startServer(env);
    const call = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
      const r = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return r.json();
    };
    const t = await call(first, 'POST', '/v1/templates', { name: 'crash', imageName: 'ubuntu', isServerless: true });
    const e = await call(first, 'POST', '/v1/endpoints', { name: 'crash', templateId: t.id });
    for (let i = 0; i < 3; i++) await call(first, 'PATCH', `/v1/templates/${t.id}`, { readme: `v${i}` });
    await first.stop('SIGKILL');

    await receiver.listen(port);
    const second = await startServer(env);
    try {
      const releases = await call(second, 'GET', `/v1/endpoints/${e.id}/releases`);
      assert.equal(releases.length, 3);
      await eventually(() => releases.every((r: { id: string }) => receiver.ids().has(`evt_${r.id}`)), 'delivered after the restart');
      assert.ok(receiver.received.every((r) => r.verified));
    } finally {
      assert.equal(await second.stop(), 0);
    }
  });
});
