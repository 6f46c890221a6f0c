import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dialectFor, sqliteFilesOpenToOthers } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { call, podplate, startServer } from '../support/process.ts';

// The SQLite database holds every template's env values: Podplate creates its folder 0700 and its files 0600, and
// leaves the mode of a folder or file that exists alone, saying so when others may read it. SQLite only: PostgreSQL
// keeps its own files. The umask is 0 here, so that only the modes Podplate asks for can account for what is seen.

const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe('the SQLite files are private to the user running Podplate', () => {
  let dir: string;
  let umask: number;
  before(() => {
    umask = process.umask(0);
    dir = mkdtempSync(join(tmpdir(), 'podplate-modes-'));
  });
  after(() => {
    process.umask(umask);
    rmSync(dir, { recursive: true, force: true });
  });

  test('a database Podplate creates: its folders 0700; the database, -wal and -shm 0600', async () => {
    const file = join(dir, 'fresh', 'data', 'podplate.db');
    const store = Store.open(dialectFor(`sqlite:${file}`));
    try {
      await store.migrate();
      await store.transaction(async (tx) => tx.accounts.listKeys());
      assert.deepEqual([join(dir, 'fresh'), join(dir, 'fresh', 'data'), file, `${file}-wal`, `${file}-shm`].map(mode), [
        '700',
        '700',
        '600',
        '600',
        '600',
      ]);
      assert.deepEqual(sqliteFilesOpenToOthers(`sqlite:${file}`), []);
    } finally {
      await store.close();
    }
  });

  test('an existing folder and database keep their modes, and the files open to others are named', async () => {
    const folder = join(dir, 'existing');
    mkdirSync(folder, { mode: 0o755 });
    const file = join(folder, 'podplate.db');
    writeFileSync(file, '');
    chmodSync(file, 0o644);
    const store = Store.open(dialectFor(`sqlite:${file}`));
    try {
      await store.migrate();
      assert.deepEqual([folder, file, `${file}-wal`].map(mode), ['755', '644', '644']);
      assert.deepEqual(sqliteFilesOpenToOthers(`sqlite:${file}`), [
        { path: file, mode: '0644' },
        { path: `${file}-wal`, mode: '0644' },
        { path: `${file}-shm`, mode: '0644' },
      ]);
    } finally {
      await store.close();
    }
    assert.deepEqual(sqliteFilesOpenToOthers('postgres://postgres@127.0.0.1:5432/x'), []);
  });

  test('podplate serve creates private files, and warns at start about a database others may read', async () => {
    const fresh = join(dir, 'served', 'podplate.db');
    const server = await startServer({ DATABASE_URL: `sqlite:${fresh}`, LOG_LEVEL: 'info' });
    try {
      const key = server.firstKey() as string;
      assert.equal((await call(server, key, 'POST', '/v1/templates', { name: 'x', imageName: 'ubuntu' })).status, 200);
      assert.deepEqual([join(dir, 'served'), fresh, `${fresh}-wal`, `${fresh}-shm`].map(mode), ['700', '600', '600', '600']);
      assert.doesNotMatch(server.stdout(), /other users may read/);
    } finally {
      await server.stop();
    }

    const open = join(dir, 'open.db');
    writeFileSync(open, '');
    chmodSync(open, 0o664);
    const env = { DATABASE_URL: `sqlite:${open}`, LOG_LEVEL: 'warn' };
    assert.equal(podplate(['migrate'], env).code, 0);
    const loose = await startServer(env);
    await loose.stop();
    const warnings = loose
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.path === open);
    assert.deepEqual(
      warnings.map((w) => [w.level, w.mode, w.msg]),
      [[40, '0664', `other users may read or write the database file ${open} (mode 0664); chmod 600 it`]],
    );
    assert.equal(mode(open), '664', 'left as the operator made it');
  });
});
