import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';

// Crash durability: a server under concurrent creates and updates is killed with SIGKILL at a random moment, five
// times over. After each restart, every write acknowledged with a 2xx is there with the acknowledged content, and
// nothing else changed: a template exists only if its create was sent, and holds either its last acknowledged
// content or that of the one update still in flight when the process died.

const ROUNDS = 5;
const WORKERS = 6;

interface Known {
  readme: string;
  revision: number;
  /** The update in flight when the process died, which may or may not have landed. */
  inFlight?: string;
}

forEachDialect('crash durability', (dialect) => {
  let db: Database;
  let env: Record<string, string>;
  let key: string;
  before(async () => {
    db = await freshDatabase(dialect);
    env = { DATABASE_URL: db.url, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' };
    key = podplate(['keys', 'create', '--user', 'writer'], env).stdout.trim();
  });
  after(() => db.drop());

  test(`SIGKILL at a random moment under concurrent writes loses nothing acknowledged (${ROUNDS} rounds)`, async () => {
    const known = new Map<string, Known>();
    const sentCreates = new Set<string>();
    let acknowledged = 0;

    const request = (server: ServerProcess, method: string, path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    /** Everything acknowledged is there as acknowledged; nothing is there that no request created. */
    const verify = async (check: ServerProcess) => {
      for (const [id, expected] of known) {
        const r = await fetch(`${check.url}/v1/templates/${id}`, { headers: { authorization: `Bearer ${key}` } });
        assert.equal(r.status, 200, `acknowledged template ${id} is there`);
        const t = await r.json();
        const allowed = [expected.readme, expected.inFlight].filter(Boolean);
        assert.ok(allowed.includes(t.readme), `${id}: ${t.readme} is one of ${allowed}`);
        assert.ok(t.revision >= expected.revision, `${id}: revision ${t.revision} >= ${expected.revision}`);
        known.set(id, { readme: t.readme, revision: t.revision }); // what landed is now what is known
      }
      let url: string | undefined = '/v1/templates?limit=1000';
      while (url) {
        const r: Response = await fetch(`${check.url}${url}`, { headers: { authorization: `Bearer ${key}` } });
        for (const t of await r.json()) {
          assert.ok(sentCreates.has(t.name), `template ${t.name} was created by a request`);
          if (!known.has(t.id)) known.set(t.id, { readme: t.readme, revision: t.revision }); // created, not acknowledged
        }
        url = /^<([^>]+)>; rel="next"$/.exec(r.headers.get('link') ?? '')?.[1];
      }
    };

    for (let round = 0; round < ROUNDS; round++) {
      const server = await startServer(env);
      if (round > 0) await verify(server); // after the crash of the round before
      let dead = false;
      const worker = async (w: number) => {
        const mine: string[] = [...known.keys()].filter((_, i) => i % WORKERS === w);
        for (let i = 0; !dead; i++) {
          const id = mine[i % Math.max(mine.length, 1)];
          if (!id || i % 2 === 0) {
            const name = `r${round} w${w} #${i}`;
            sentCreates.add(name);
            try {
              const r = await request(server, 'POST', '/v1/templates', { name, imageName: 'ubuntu', readme: 'created' });
              if (r.status !== 200) throw new Error(`create answered ${r.status}`);
              const t = await r.json();
              known.set(t.id, { readme: t.readme, revision: t.revision });
              mine.push(t.id);
              acknowledged++;
            } catch (error) {
              if (!dead) throw error;
            }
          } else {
            const readme = `r${round} w${w} #${i}`;
            const entry = known.get(id) as Known;
            entry.inFlight = readme;
            try {
              const r = await request(server, 'PATCH', `/v1/templates/${id}`, { readme });
              if (r.status !== 200) throw new Error(`update answered ${r.status}`);
              const t = await r.json();
              known.set(id, { readme: t.readme, revision: t.revision });
              acknowledged++;
            } catch (error) {
              if (!dead) throw error;
            }
          }
        }
      };
      const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 1200));
      dead = true;
      server.child.kill('SIGKILL');
      await server.exited;
      await Promise.all(workers);
    }
    const last = await startServer(env);
    try {
      await verify(last);
    } finally {
      assert.equal(await last.stop(), 0);
    }
    assert.ok(acknowledged > ROUNDS * 10, `enough writes were acknowledged to mean something (${acknowledged})`);

    if (dialect === 'sqlite') {
      const file = new SQLite(db.url.replace(/^sqlite:/, ''), { readonly: true });
      try {
        assert.equal(file.pragma('integrity_check', { simple: true }), 'ok');
      } finally {
        file.close();
      }
    }
  });
});
