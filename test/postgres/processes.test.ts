import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { type Database, DIALECTS, freshDatabase } from '../support/harness.ts';
import { call, podplate, type ServerProcess, startServer } from '../support/process.ts';

// Many stateless processes on one PostgreSQL database: the guarantees that hold across processes.

const skip = DIALECTS.includes('postgres') ? false : 'TEST_DATABASE_URL is not set';

describe('two processes on one PostgreSQL database', { skip }, () => {
  let db: Database;
  let a: ServerProcess;
  let b: ServerProcess;
  let key: string;

  before(async () => {
    db = await freshDatabase('postgres');
    const env = { DATABASE_URL: db.url };
    // Both start on an empty schema at the same moment: the migration lock makes one wait for the other.
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
    const created = podplate(['keys', 'create', '--user', 'alice'], env);
    assert.equal(created.code, 0, created.stderr);
    key = created.stdout.trim();
  });
  after(async () => {
    assert.equal(await a?.stop(), 0);
    assert.equal(await b?.stop(), 0);
    await db?.drop();
  });

  test('the same name created on both at the same instant: exactly one 200, the other 409', async () => {
    for (let round = 0; round < 15; round++) {
      const body = { name: `race ${round}`, imageName: 'ubuntu' };
      const statuses = (await Promise.all([call(a, key, 'POST', '/v1/templates', body), call(b, key, 'POST', '/v1/templates', body)])).map(
        (r) => r.status,
      );
      assert.deepEqual(statuses.sort(), [200, 409], `round ${round}`);
    }
  });

  test('50 concurrent creates of one name across both: one 200, 49 409', async () => {
    const body = { name: 'fifty', imageName: 'ubuntu' };
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => call(i % 2 ? a : b, key, 'POST', '/v1/templates', body)));
    const statuses = replies.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1);
    assert.equal(statuses.filter((s) => s === 409).length, 49);
  });

  test('paging on one process stays stable while the other inserts', async () => {
    const owner = podplate(['keys', 'create', '--user', 'pager'], { DATABASE_URL: db.url }).stdout.trim();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++)
      ids.unshift((await call(a, owner, 'POST', '/v1/templates', { name: `p${i}`, imageName: 'ubuntu' })).body.id);
    const seen: string[] = [];
    let url: string | undefined = '/v1/templates?limit=7';
    let inserted = 0;
    while (url) {
      const page = await call(a, owner, 'GET', url);
      seen.push(...page.body.map((t: { id: string }) => t.id));
      url = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
      assert.equal((await call(b, owner, 'POST', '/v1/templates', { name: `new ${inserted++}`, imageName: 'ubuntu' })).status, 200);
    }
    assert.deepEqual(seen, ids);
  });

  test('a key revoked by the CLI is refused by both processes within 1 s (they hear of it from the database)', async () => {
    const created = podplate(['keys', 'create', '--user', 'revokee'], { DATABASE_URL: db.url });
    const secret = created.stdout.trim();
    const id = /key_[0-9a-z]{16}/.exec(created.stderr)?.[0] as string;
    assert.equal((await call(a, secret, 'GET', '/v1/templates')).status, 200);
    assert.equal((await call(b, secret, 'GET', '/v1/templates')).status, 200);
    assert.equal(podplate(['keys', 'revoke', id], { DATABASE_URL: db.url }).code, 0);
    for (const server of [a, b]) {
      await eventually('the revoked key is refused', 1000, async () => (await call(server, secret, 'GET', '/v1/templates')).status === 401);
    }
  });
});
