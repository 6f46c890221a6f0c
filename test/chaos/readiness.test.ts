import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { DIALECTS } from '../support/harness.ts';
import { type ServerProcess, startServer } from '../support/process.ts';

// The chaos tier: /readyz follows the database. Its own database is made to refuse connections and its backends are
// terminated, as postgres-outages.test.ts does (never the machine's server): /readyz answers 503 meanwhile, quickly
// and with a problem, /healthz stays 200, and /readyz is 200 again once the database takes connections.

const skip = DIALECTS.includes('postgres') ? false : 'TEST_DATABASE_URL is not set';

describe('/readyz while the database is unreachable', { skip }, () => {
  const name = `podplate_ready_${randomBytes(4).toString('hex')}`;
  const sqlAsAdmin = async (text: string) => {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      return await client.query(text);
    } finally {
      await client.end();
    }
  };
  const terminate = () =>
    sqlAsAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`);
  let server: ServerProcess;

  before(async () => {
    await sqlAsAdmin(`create database ${name}`);
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.pathname = `/${name}`;
    server = await startServer({ DATABASE_URL: url.toString(), DB_CONNECT_TIMEOUT_MS: '1000' });
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await sqlAsAdmin(`alter database ${name} allow_connections true`).catch(() => {});
    await terminate().catch(() => {});
    await sqlAsAdmin(`drop database if exists ${name}`);
  });

  /** /readyz's answer, and how long it took. */
  const ready = async () => {
    const started = performance.now();
    const r = await fetch(`${server.url}/readyz`);
    const body = await r.json();
    return { status: r.status, retryAfter: r.headers.get('retry-after'), body, ms: performance.now() - started };
  };
  const until = async (status: number, withinMs: number) => {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const r = await ready();
      if (r.status === status) return r;
      assert.ok(Date.now() < deadline, `/readyz did not turn ${status} within ${withinMs} ms (last: ${JSON.stringify(r)})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  test('503 while the database refuses connections, 200 again after, the process up throughout', async () => {
    assert.equal((await ready()).status, 200);

    await sqlAsAdmin(`alter database ${name} allow_connections false`);
    await terminate();
    const down = await until(503, 10_000);
    assert.equal(down.retryAfter, '1');
    assert.equal(down.body.type, 'https://podplate.dev/problems/unavailable');
    assert.equal(down.body.detail, 'The database is not reachable.');
    // It keeps answering, and within the connect timeout (1 s) and a margin: no request hangs on the database.
    for (let i = 0; i < 5; i++) {
      const again = await ready();
      assert.equal(again.status, 503);
      assert.ok(again.ms < 5000, `answered in ${Math.round(again.ms)} ms`);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'the process itself is up');
    }

    await sqlAsAdmin(`alter database ${name} allow_connections true`);
    const up = await until(200, 15_000);
    assert.deepEqual(up.body, { status: 'ready' });
    assert.equal(server.child.exitCode, null, 'the process never exited');
  });
});
