import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { eventually } from '../support/eventually.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { call, podplate, type ServerProcess, startServer } from '../support/process.ts';

// The read cache is never stale for long (docs/reliability.md, "Freshness"): two server processes on one database
// (PostgreSQL, and SQLite's one file), each with its cache warm, and writes made through one of them, through SQL
// around both, and by the CLI. The bounds are deadlines polled against, not speeds.

forEachDialect('freshness of the read cache across processes', (dialect) => {
  let db: Database;
  let a: ServerProcess;
  let b: ServerProcess;
  let key: string;
  let env: Record<string, string>;
  let raw: Kysely<any>;

  before(async () => {
    db = await freshDatabase(dialect);
    env = { DATABASE_URL: db.url, RATE_LIMIT_PER_MINUTE: '0' };
    a = await startServer(env);
    b = await startServer(env);
    const created = podplate(['keys', 'create', '--user', 'fresh'], env);
    assert.equal(created.code, 0, created.stderr);
    key = created.stdout.trim();
    raw = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
  });
  after(async () => {
    await raw?.destroy();
    assert.equal(await a?.stop(), 0);
    assert.equal(await b?.stop(), 0);
    await db?.drop();
  });

  const create = async (server: ServerProcess, overrides: Record<string, unknown> = {}) => {
    const r = await call(server, key, 'POST', '/v1/templates', { name: `t ${Math.random()}`, imageName: 'ubuntu', ...overrides });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { id: string; name: string; revision: number };
  };
  const get = (server: ServerProcess, id: string) => call(server, key, 'GET', `/v1/templates/${id}`);
  /** Reads the template on both processes until each has it cached (a second read is a hit). */
  const warm = async (id: string) => {
    for (const server of [a, b]) for (let i = 0; i < 3; i++) assert.equal((await get(server, id)).status, 200);
  };

  /** A figure of a process's /metrics. */
  const figure = async (server: ServerProcess, line: RegExp) => Number(line.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1]);

  test('each process answers repeated reads from its cache, which it trusts', async () => {
    const t = await create(a);
    for (const server of [a, b]) {
      const hits = await figure(server, /\npodplate_cache_hits_total\{cache="templates"\} (\d+)/);
      await warm(t.id);
      assert.ok((await figure(server, /\npodplate_cache_hits_total\{cache="templates"\} (\d+)/)) >= hits + 2, 'reads hit the cache');
      assert.ok((await figure(server, /\npodplate_cache_hits_total\{cache="keys"\} (\d+)/)) > 0, 'keys hit the cache');
      assert.equal(await figure(server, /\npodplate_cache_trusted (\d+)/), 1);
    }
  });

  test('read-your-writes: the process that wrote serves the same revision and ETag at once', async () => {
    const t = await create(a);
    await warm(t.id);
    for (let round = 1; round <= 20; round++) {
      const updated = await call(a, key, 'POST', `/v1/templates/${t.id}/update`, { readme: `round ${round}` });
      assert.equal(updated.status, 200);
      const read = await get(a, t.id);
      assert.equal(read.body.revision, updated.body.revision, `round ${round}`);
      assert.equal(read.body.readme, `round ${round}`);
      assert.equal(read.headers.get('etag'), updated.headers.get('etag'));
    }
  });

  test('another process serves an update within 1 s', async () => {
    const t = await create(a);
    await warm(t.id);
    const updated = await call(a, key, 'POST', `/v1/templates/${t.id}/update`, { readme: 'made on a' });
    assert.equal(updated.status, 200);
    await eventually('b serves the update', 1000, async () => {
      const r = await get(b, t.id);
      return {
        ok: r.body.revision === updated.body.revision && r.headers.get('etag') === updated.headers.get('etag'),
        seen: r.body.revision,
      };
    });
  });

  test('a direct SQL write is served by every process within 1 s, by GET and by the list', async () => {
    const t = await create(b);
    await warm(t.id);
    await sql`update templates set image_name = 'acme/fixed:2', readme = 'fixed in SQL' where id = ${t.id}`.execute(raw);
    for (const server of [a, b]) {
      await eventually(`${server === a ? 'a' : 'b'} serves the SQL write by GET`, 1000, async () => {
        const r = await get(server, t.id);
        return { ok: r.body.imageName === 'acme/fixed:2' && r.body.readme === 'fixed in SQL', seen: r.body.imageName };
      });
      await eventually('and by the list', 1000, async () => {
        const r = await call(server, key, 'GET', `/v1/templates?q=${encodeURIComponent(t.name)}`);
        return { ok: r.body[0]?.imageName === 'acme/fixed:2', seen: r.body[0]?.imageName };
      });
    }
  });

  test('a deletion in SQL is a 404 on every process within 1 s', async () => {
    const t = await create(a);
    await warm(t.id);
    await sql`delete from templates where id = ${t.id}`.execute(raw);
    for (const server of [a, b]) await eventually('the deletion is served', 1000, async () => (await get(server, t.id)).status === 404);
  });

  test('a key revoked with `podplate keys revoke` is refused by every process within 1 s', async () => {
    const created = podplate(['keys', 'create', '--user', 'revokee'], env);
    const secret = created.stdout.trim();
    const id = /key_[0-9a-z]{16}/.exec(created.stderr)?.[0] as string;
    for (const server of [a, b]) for (let i = 0; i < 3; i++) assert.equal((await call(server, secret, 'GET', '/v1/templates')).status, 200);
    const revoked = podplate(['keys', 'revoke', id], env);
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const server of [a, b]) {
      await eventually(
        'the revoked key is refused',
        1000,
        async () => (await call(server, secret, 'GET', '/v1/templates?limit=1')).status === 401,
      );
    }
  });

  if (dialect === 'postgres') {
    /** The backend pid of `server`'s listening connection (its application_name names the process), if it listens. */
    const listenerOf = async (server: ServerProcess): Promise<number | undefined> => {
      const { rows } = await sql<{
        pid: number;
      }>`select pid from pg_stat_activity where application_name = ${`podplate-listener-${server.child.pid}`}`.execute(raw);
      assert.ok(rows.length <= 1, 'one listening connection per process');
      return rows[0]?.pid;
    };

    test('after its listening connection is terminated, a process still serves updates within 2 s, and listens again', async () => {
      const t = await create(a);
      await warm(t.id);
      const listener = await listenerOf(a);
      assert.ok(listener, 'a listens');
      // Only this process's own listener is terminated, never another backend.
      await sql`select pg_terminate_backend(${listener}::int)`.execute(raw);
      await sql`update templates set readme = 'while a was deaf' where id = ${t.id}`.execute(raw);
      await eventually('a serves the update after losing its listener', 2000, async () => {
        const r = await get(a, t.id);
        return { ok: r.body.readme === 'while a was deaf', seen: r.body.readme };
      });
      await eventually('a listens again, on a new connection', 10_000, async () => {
        const pid = await listenerOf(a);
        return { ok: pid !== undefined && pid !== listener, seen: pid };
      });
      await eventually('a trusts its cache again', 10_000, async () => (await figure(a, /\npodplate_cache_trusted (\d+)/)) === 1);
      for (let i = 0; i < 3; i++) await get(a, t.id);
      await sql`update templates set readme = 'heard again' where id = ${t.id}`.execute(raw);
      await eventually(
        'a serves the next update, heard on its new listener',
        1000,
        async () => (await get(a, t.id)).body.readme === 'heard again',
      );
    });
  }
});
