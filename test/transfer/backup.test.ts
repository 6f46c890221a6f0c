import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { DIALECTS, freshDatabase } from '../support/harness.ts';
import { BIN, call, podplate, startServer } from '../support/process.ts';

// podplate backup copies a SQLite install while it serves: the copy holds every write acknowledged before the backup
// started, and serves as an install of its own, its secrets key file (when SECRETS_KEY is unset) copied beside it.

test('a backup taken under write load holds every write acknowledged before it started, and serves', async () => {
  const db = await freshDatabase('sqlite');
  const file = db.url.slice('sqlite:'.length);
  const copy = join(file, '..', 'backup.db');
  const server = await startServer({ DATABASE_URL: db.url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' });
  try {
    const key = server.firstKey() as string;
    // A registry password, sealed under the install's key file: the copy must open it too.
    const auth = await call(server, key, 'POST', '/v1/containerregistryauth', { name: 'ghcr', username: 'bot', password: 's3cret pass' });
    assert.equal(auth.status, 200, JSON.stringify(auth.body));
    // Long readmes make a database large enough that the copy takes a while.
    const readme = 'a long readme '.repeat(5000);
    const acknowledged: string[] = [];
    let writing = true;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let n = 0; writing; n++) {
        const r = await call(server, key, 'POST', '/v1/templates', { name: `w${w} n${n}`, imageName: 'ubuntu', readme });
        assert.equal(r.status, 200);
        acknowledged.push(r.body.id);
      }
    });
    while (acknowledged.length < 400) await new Promise((r) => setTimeout(r, 20));

    const before = [...acknowledged];
    const backup = spawn(process.execPath, [BIN, 'backup', copy], {
      env: { ...process.env, DATABASE_URL: db.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    backup.stderr.on('data', (d) => {
      stderr += d;
    });
    const code = await new Promise((resolve) => backup.once('exit', resolve));
    const during = acknowledged.length - before.length;
    writing = false;
    await Promise.all(writers);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /Backed up to .* serve it with DATABASE_URL=sqlite:/);
    assert.match(stderr, /Its secrets key was copied beside it/);
    assert.equal(statSync(`${copy}.secrets-key`).mode & 0o777, 0o600);
    assert.ok(during > 0, 'writes were acknowledged while the backup ran');

    const restored = new SQLite(copy, { readonly: true });
    assert.equal(restored.pragma('integrity_check', { simple: true }), 'ok');
    restored.close();
    const second = await startServer({ DATABASE_URL: `sqlite:${copy}`, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' });
    try {
      for (const id of before) assert.equal((await call(second, key, 'GET', `/v1/templates/${id}`)).status, 200, `template ${id}`);
      const created = await call(second, key, 'POST', '/v1/templates', { name: 'after the restore', imageName: 'ubuntu' });
      assert.equal(created.status, 200);
      const credentials = await call(second, key, 'GET', `/v1/containerregistryauth/${auth.body.id}/credentials`);
      assert.deepEqual(credentials.body, { username: 'bot', password: 's3cret pass' }, 'the copy opens the secrets sealed before');
    } finally {
      assert.equal(await second.stop(), 0);
    }
  } finally {
    await server.stop();
    await db.drop();
  }
});

test('backup never overwrites a file, and sends PostgreSQL to pg_dump', async () => {
  const db = await freshDatabase('sqlite');
  try {
    assert.equal(podplate(['migrate'], { DATABASE_URL: db.url }).code, 0);
    const taken = join(db.url.slice('sqlite:'.length), '..', 'taken.db');
    writeFileSync(taken, 'mine');
    const r = podplate(['backup', taken], { DATABASE_URL: db.url });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /exists; a backup never overwrites a file/);
    assert.equal(podplate(['backup'], { DATABASE_URL: db.url }).code, 2);
    if (DIALECTS.includes('postgres')) {
      const pg = await freshDatabase('postgres');
      try {
        const other = join(db.url.slice('sqlite:'.length), '..', 'pg.db');
        const refused = podplate(['backup', other], { DATABASE_URL: pg.url });
        assert.equal(refused.code, 1);
        assert.match(refused.stderr, /for PostgreSQL use pg_dump/);
        assert.equal(existsSync(other), false);
      } finally {
        await pg.drop();
      }
    }
  } finally {
    await db.drop();
  }
});
