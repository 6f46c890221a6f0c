import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { freshDatabase } from './support/harness.ts';
import { call, type ServerProcess, startServer } from './support/process.ts';
import { eventually, Receiver, SECRET } from './support/receiver.ts';

// SIGTERM under load: the server stops accepting, every request it had accepted is answered (none gets a 5xx or a
// reset), the deliverer finishes its attempt, the database closes, and the process exits 0. SHUTDOWN_GRACE_SECONDS
// bounds the wait.

const keyOf = (server: ServerProcess) => server.firstKey() as string;

/** The request ids the server logged as arriving (at LOG_LEVEL=debug): the requests it accepted. */
const accepted = (server: ServerProcess) =>
  new Set(
    server
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === 'request received')
      .map((entry) => entry.reqId as string),
  );

test('SIGTERM under load: every accepted request is answered 2xx, the rest were never accepted, exit 0', async () => {
  const db = await freshDatabase('sqlite');
  try {
    const server = await startServer({ DATABASE_URL: db.url, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'debug' });
    const key = keyOf(server);
    const outcomes = new Map<string, number | string>();
    let signalled = 0;
    let answeredAfterSignal = 0;
    const clients = Array.from({ length: 16 }, async (_, c) => {
      for (let n = 0; ; n++) {
        const id = `load-${c}-${n}`;
        try {
          const r = await fetch(`${server.url}/v1/templates`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
            body: JSON.stringify({ name: id, imageName: 'ubuntu' }),
          });
          await r.arrayBuffer();
          outcomes.set(id, r.status);
          if (signalled && r.status === 200) answeredAfterSignal++;
        } catch (error) {
          const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
          outcomes.set(id, code);
          // Refused: the server accepts no more connections. Stop once it has exited.
          if (server.child.exitCode !== null || code === 'ECONNREFUSED') return;
        }
      }
    });
    await eventually(() => outcomes.size >= 300, 'some load');
    signalled = Date.now();
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.stderr());
    await Promise.all(clients);

    const seen = accepted(server);
    assert.ok(seen.size >= 300);
    for (const [id, outcome] of outcomes) {
      if (seen.has(id)) assert.equal(outcome, 200, `${id}, accepted, was answered ${outcome}`);
      else assert.equal(typeof outcome, 'string', `${id} got an answer (${outcome}) but was never logged as accepted`);
    }
    assert.ok(answeredAfterSignal > 0, 'requests in flight at the signal were answered');
    assert.ok(server.stdout().includes('shutting down: draining in-flight requests'));
  } finally {
    await db.drop();
  }
});

/** A POST whose body is sent in two halves, `pause` apart; the response, or the error that ended it. */
function slowUpload(server: ServerProcess, key: string, pauseMs: number, onFirstHalf: () => void) {
  const body = JSON.stringify({ name: `slow ${pauseMs}`, imageName: 'ubuntu' });
  return new Promise<{ status?: number; connection?: string; error?: string }>((resolve) => {
    const req = request(`${server.url}/v1/templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.write(body.slice(0, 10));
    onFirstHalf();
    setTimeout(() => req.end(body.slice(10)), pauseMs);
  });
}

test('a request in flight at SIGTERM finishes within SHUTDOWN_GRACE_SECONDS; past it the process exits anyway', async () => {
  const db = await freshDatabase('sqlite');
  try {
    const patient = await startServer({ DATABASE_URL: db.url, SHUTDOWN_GRACE_SECONDS: '10' });
    const key = keyOf(patient);
    const slow = slowUpload(patient, key, 1500, () => setTimeout(() => patient.child.kill('SIGTERM'), 300));
    assert.deepEqual(await slow, { status: 200, connection: 'close' });
    assert.equal(await patient.exited, 0);

    const impatient = await startServer({ DATABASE_URL: db.url, SHUTDOWN_GRACE_SECONDS: '1' });
    const started = Date.now();
    const stalled = slowUpload(impatient, key, 60_000, () => setTimeout(() => impatient.child.kill('SIGTERM'), 300));
    assert.equal(await impatient.exited, 1, 'the grace period ran out');
    assert.ok(Date.now() - started < 10_000, 'not waiting for the stalled request');
    assert.ok(impatient.stdout().includes('killed by timeout'), impatient.stdout());
    assert.ok('error' in (await stalled));
  } finally {
    await db.drop();
  }
});

test('SIGTERM while a webhook is being sent: the attempt finishes and is recorded before the database closes', async () => {
  const db = await freshDatabase('sqlite');
  const receiver = new Receiver(SECRET);
  const port = await receiver.listen();
  receiver.delayMs = 1500;
  try {
    const server = await startServer({
      DATABASE_URL: db.url,
      RELEASE_WEBHOOK_URL: `http://127.0.0.1:${port}/hooks`,
      RELEASE_WEBHOOK_SECRET: SECRET,
      OUTBOX_POLL_MS: '20',
    });
    const key = keyOf(server);
    const t = await call(server, key, 'POST', '/v1/templates', { name: 'worker', imageName: 'ubuntu', isServerless: true });
    await call(server, key, 'POST', '/v1/endpoints', { name: 'e', templateId: t.body.id, workersMin: 0, workersMax: 1 });
    await call(server, key, 'POST', `/v1/templates/${t.body.id}/update`, { imageName: 'ubuntu:2' });
    // The attempt is under way once the receiver holds it.
    await eventually(() => receiver.holding > 0, 'an attempt under way');
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.stderr());
    assert.equal(receiver.received.length, 1);
    const file = new SQLite(db.url.slice('sqlite:'.length), { readonly: true });
    const row = file.prepare('select attempts, delivered_at from outbox').get() as { attempts: number; delivered_at: string | null };
    file.close();
    assert.equal(row.attempts, 1);
    assert.ok(row.delivered_at, 'the delivery was recorded');
  } finally {
    await receiver.close();
    await db.drop();
  }
});
