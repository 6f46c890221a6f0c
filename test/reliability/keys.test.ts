import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';

forEachDialect('API keys at rest and in logs', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  const secrets: string[] = [];
  let env: Record<string, string>;

  before(async () => {
    db = await freshDatabase(dialect);
    env = { DATABASE_URL: db.url, LOG_LEVEL: 'trace' };
    for (const user of ['alice', 'bob']) secrets.push(podplate(['keys', 'create', '--user', user], env).stdout.trim());
    server = await startServer(env);
    secrets.push(server.firstKey() ?? ''); // none: keys existed before the first start
  });
  after(async () => {
    await server.stop();
    await db.drop();
  });

  test('the database holds only SHA-256 digests of keys, in no column anything of a key but its short prefix', async () => {
    const raw = new Kysely<Record<string, Record<string, unknown>>>({ dialect: dialectFor(db.url).kysely });
    try {
      const rows = (await sql<Record<string, unknown>>`select * from api_keys`.execute(raw)).rows;
      assert.equal(rows.length, 2);
      const dump = JSON.stringify(rows);
      for (const secret of secrets.filter(Boolean)) {
        assert.equal(dump.includes(secret), false, 'no key at rest');
        assert.equal(dump.includes(secret.slice(3, 20)), false, 'no part of one beyond its prefix');
      }
      for (const row of rows) assert.match(String(row.digest), /^[0-9a-f]{64}$/);
    } finally {
      await raw.destroy();
    }
  });

  test('no log line holds a key, whatever requests were made with it', async () => {
    const [alice, bob] = secrets as [string, string];
    const list = podplate(['keys', 'list'], env).stdout;
    const bobsId = /(key_[0-9a-z]{16})\s+bob/.exec(list)?.[1] as string;
    const requests: [string, RequestInit][] = [
      ['/v1/templates', { headers: { authorization: `Bearer ${alice}` } }],
      [
        '/v1/templates',
        {
          method: 'POST',
          headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: alice, imageName: 'ubuntu' }),
        },
      ],
      ['/v1/templates', { headers: { authorization: `Bearer ${alice}x` } }],
      ['/v1/templates', { headers: { authorization: alice } }],
      [`/v1/templates?q=${alice}`, { headers: { authorization: `Bearer ${alice}` } }],
      ['/v1/nothing', { headers: { authorization: `Bearer ${bob}` } }],
    ];
    for (const [path, init] of requests) await fetch(`${server.url}${path}`, init);
    assert.equal(podplate(['keys', 'revoke', bobsId], env).code, 0);
    assert.equal((await fetch(`${server.url}/v1/templates`, { headers: { authorization: `Bearer ${bob}` } })).status, 401);
    await new Promise((r) => setTimeout(r, 200));
    const logs = server.stdout() + server.stderr();
    assert.ok(logs.split('\n').length > 10, 'there are logs to scan');
    // Not even a key sent where a key doesn't belong (a name, a search): bodies are not logged, URLs are redacted
    // (test/reliability/logs.test.ts).
    for (const secret of [alice, bob]) assert.equal(logs.includes(secret.slice(3)), false, 'a log line holds a key');
    assert.equal(/authorization/i.test(logs), false, 'no Authorization header in any log line');
    assert.equal(logs.includes(`Bearer ${alice}`), false);
  });
});
