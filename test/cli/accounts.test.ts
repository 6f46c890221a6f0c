import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { expiryOf } from '../../src/cli/accounts.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { BIN, podplate, type ServerProcess, startServer } from '../support/process.ts';

// podplate accounts …: accounts and keys over the API, as a client (PODPLATE_URL and PODPLATE_API_KEY), beside the
// admin's `podplate keys …`, which works on the database.

test('--expires takes a duration from now or an ISO time, and nothing else', () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');
  assert.equal(expiryOf('90m', now), '2026-01-01T01:30:00.000Z');
  assert.equal(expiryOf('12h', now), '2026-01-01T12:00:00.000Z');
  assert.equal(expiryOf('30d', now), '2026-01-31T00:00:00.000Z');
  assert.equal(expiryOf('2027-02-03T04:05:06Z', now), '2027-02-03T04:05:06.000Z');
  for (const bad of ['30', 'soon', '1w', '-5d', '']) assert.throws(() => expiryOf(bad, now), /--expires takes a duration/);
});

forEachDialect('podplate accounts', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  let home: string;
  let platformKey: string;
  before(async () => {
    db = await freshDatabase(dialect);
    home = mkdtempSync(join(tmpdir(), 'podplate-cli-accounts-'));
    platformKey = podplate(['keys', 'create', '--user', 'ops', '--role', 'platform'], { DATABASE_URL: db.url }).stdout.trim();
    server = await startServer({ DATABASE_URL: db.url });
  });
  after(async () => {
    await server.stop();
    await db.drop();
    rmSync(home, { recursive: true, force: true });
  });

  const run = (args: string[], key: string) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: { ...process.env, XDG_CONFIG_HOME: home, PODPLATE_URL: server.url, PODPLATE_API_KEY: key },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  test('a platform key makes an account and a read-only key; the user lists and revokes its keys', () => {
    const made = run(['accounts', 'create', 'nora'], platformKey);
    assert.equal(made.code, 0, made.stderr);
    assert.equal(made.stdout, '');
    assert.match(made.stderr, /Created account nora \(user\)/);
    assert.equal(run(['accounts', 'create', 'nora'], platformKey).code, 1, 'a name taken');

    const full = run(['accounts', 'keys', 'create', '--account', 'nora', '--label', 'laptop'], platformKey);
    assert.equal(full.code, 0, full.stderr);
    assert.match(full.stdout, /^pp_[A-Za-z0-9_-]{43}\n$/, 'the key alone on stdout');
    const noraKey = full.stdout.trim();
    // The user makes its own read-only key that expires, without naming its account.
    const read = run(['accounts', 'keys', 'create', '--label', 'dashboard', '--read-only', '--expires', '30d', '-o', 'json'], noraKey);
    assert.equal(read.code, 0, read.stderr);
    const created = JSON.parse(read.stdout);
    assert.equal(created.access, 'read');
    assert.ok(Date.parse(created.expiresAt) > Date.now() + 29 * 86_400_000);

    const listed = run(['accounts', 'keys', 'list'], noraKey);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^ID\s+LABEL\s+ACCESS\s+EXPIRES\s+LAST USED\s+CREATED\n/);
    assert.match(listed.stdout, new RegExp(`${created.id}\\s+dashboard\\s+read\\s+in 4 weeks`));
    assert.match(listed.stdout, /laptop\s+read-write\s+never\s+just now/);
    assert.equal(listed.stdout.includes(noraKey), false);
    assert.equal(listed.stdout.includes(created.key), false);

    // The read-only key may not write, nor make keys: the API's 403, exit 1.
    const refused = run(['accounts', 'keys', 'create'], created.key);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Forbidden \(403\): This API key is read-only/);
    // Another account's keys are not the user's to see.
    const other = run(['accounts', 'keys', 'list', '--account', 'ops'], noraKey);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /Not found \(404\)/);

    assert.equal(run(['accounts', 'keys', 'revoke', created.id], noraKey).code, 2, 'revoking asks, or needs --yes');
    const revoked = run(['accounts', 'keys', 'revoke', created.id, '--yes'], noraKey);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.match(revoked.stderr, /Revoked key key_/);
    assert.equal(run(['whoami'], created.key).code, 1);
    assert.equal(run(['accounts', 'keys', 'list', '-q'], noraKey).stdout.trim().split('\n').length, 1);
  });
});
