import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { DIALECTS } from '../support/harness.ts';
import { call, podplate, type ServerProcess, startServer } from '../support/process.ts';

// The chaos tier (npm run test:chaos): PostgreSQL's backends terminated, connections refused, and the server itself
// restarted under load. A process on it answers 503 meanwhile, recovers by itself, and loses nothing acknowledged.

const skip = DIALECTS.includes('postgres') ? false : 'TEST_DATABASE_URL is not set';

describe('PostgreSQL outages', { skip }, () => {
  const name = `podplate_outage_${randomBytes(4).toString('hex')}`;
  const admin = () => new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  const sqlAsAdmin = async (text: string) => {
    const client = admin();
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
  let key: string;

  before(async () => {
    await sqlAsAdmin(`create database ${name}`);
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.pathname = `/${name}`;
    // The load loops below send thousands of requests on one key in a few seconds (a 503 is cheap): with the
    // default limit of 6,000 a minute, the key ran out and the checks afterwards got 429s.
    const env = { DATABASE_URL: url.toString(), DB_CONNECT_TIMEOUT_MS: '2000', RATE_LIMIT_PER_MINUTE: '0' };
    server = await startServer(env);
    key = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
  });
  after(async () => {
    await server?.stop('SIGKILL');
    await sqlAsAdmin(`alter database ${name} allow_connections true`).catch(() => {});
    await terminate().catch(() => {});
    await sqlAsAdmin(`drop database if exists ${name}`);
  });

  test('backends terminated mid-traffic, then the database refusing connections: 503s, no crash, recovery by itself, nothing acknowledged lost', async () => {
    const acknowledged = new Map<string, string>();
    const statuses = new Map<number, number>();
    const unexpected: string[] = [];
    let running = true;
    let counter = 0;
    const worker = async () => {
      while (running) {
        const i = counter++;
        const r = await call(server, key, 'POST', '/v1/templates', { name: `load ${i}`, imageName: 'ubuntu', readme: `r${i}` });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status === 200) acknowledged.set(r.body.id, `r${i}`);
        else if (r.status !== 503 || r.body.type !== 'https://podplate.dev/problems/unavailable') unexpected.push(JSON.stringify(r.body));
      }
    };
    const workers = Array.from({ length: 8 }, worker);

    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 3; i++) {
      await terminate();
      await new Promise((r) => setTimeout(r, 200));
    }
    // Now the database goes away altogether for a while.
    await sqlAsAdmin(`alter database ${name} allow_connections false`);
    await terminate();
    await new Promise((r) => setTimeout(r, 1000));
    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal((await call(server, key, 'GET', '/v1/templates')).status, 503);
    await sqlAsAdmin(`alter database ${name} allow_connections true`);
    await new Promise((r) => setTimeout(r, 1000));
    running = false;
    await Promise.all(workers);

    assert.deepEqual(unexpected, [], 'every failure is a 503 problem');
    assert.equal(server.child.exitCode, null, 'the process is still up');
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
    assert.ok((statuses.get(503) ?? 0) > 0, `saw 503s: ${JSON.stringify([...statuses])}`);
    assert.ok((statuses.get(200) ?? 0) > 0);
    for (const [id, readme] of acknowledged) {
      const r = await call(server, key, 'GET', `/v1/templates/${id}`);
      assert.equal(r.status, 200);
      assert.equal(r.body.readme, readme);
    }
  });

  test('the PostgreSQL server itself restarts under load: 503s meanwhile, recovery by itself, nothing acknowledged lost', async () => {
    const version = readdirSync('/etc/postgresql').sort().at(-1) as string;
    const acknowledged = new Map<string, string>();
    const unexpected: string[] = [];
    let unavailable = 0;
    let running = true;
    let counter = 0;
    const worker = async () => {
      while (running) {
        const i = counter++;
        try {
          const r = await call(server, key, 'POST', '/v1/templates', { name: `restart ${i}`, imageName: 'ubuntu', readme: `s${i}` });
          if (r.status === 200) acknowledged.set(r.body.id, `s${i}`);
          else if (r.status === 503) unavailable++;
          else unexpected.push(`${r.status} ${JSON.stringify(r.body)}`);
        } catch (error) {
          unexpected.push(String(error)); // the service itself must keep answering
        }
      }
    };
    const workers = Array.from({ length: 6 }, worker);
    await new Promise((r) => setTimeout(r, 300));
    // Asynchronously, so that the load goes on while the server restarts.
    await promisify(execFile)('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart', '-m', 'fast']);
    await new Promise((r) => setTimeout(r, 1500));
    running = false;
    await Promise.all(workers);

    assert.deepEqual(unexpected, []);
    assert.ok(unavailable > 0, 'requests during the restart got 503');
    assert.equal(server.child.exitCode, null, 'the process is still up');
    await eventually200(`${server.url}/readyz`);
    for (const [id, readme] of acknowledged) {
      const r = await call(server, key, 'GET', `/v1/templates/${id}`);
      assert.equal(r.status, 200);
      assert.equal(r.body.readme, readme);
    }
  });
});

async function eventually200(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await fetch(url)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`${url} did not recover`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
