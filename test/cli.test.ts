import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Database, forEachDialect, freshDatabase } from './support/harness.ts';
import { podplate, startServer } from './support/process.ts';

forEachDialect('the podplate command', (dialect) => {
  let db: Database;
  let env: Record<string, string>;
  before(async () => {
    db = await freshDatabase(dialect);
    env = { DATABASE_URL: db.url };
  });
  after(() => db.drop());

  test('migrate brings the schema up to date, twice without harm', () => {
    for (let i = 0; i < 2; i++) {
      const r = podplate(['migrate'], env);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /up to date/);
    }
  });

  test('keys create prints the key alone on stdout; keys list never shows it; revoke works', async () => {
    const created = podplate(['keys', 'create', '--user', 'alice'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^pp_[A-Za-z0-9_-]{43}\n$/);
    const secret = created.stdout.trim();
    assert.match(created.stderr, /Created key key_[0-9a-z]{16} for alice \(user\)/);
    const id = /key_[0-9a-z]{16}/.exec(created.stderr)?.[0] as string;

    const platform = podplate(['keys', 'create', '--user', 'ops', '--role', 'platform'], env);
    assert.equal(platform.code, 0);
    const mismatch = podplate(['keys', 'create', '--user', 'ops'], env);
    assert.equal(mismatch.code, 1);
    assert.match(mismatch.stderr, /account ops has role platform/);

    const list = podplate(['keys', 'list'], env);
    assert.equal(list.code, 0);
    assert.match(list.stdout, /^ID\s+ACCOUNT\s+ROLE/);
    assert.match(list.stdout, new RegExp(`${id}\\s+alice\\s+user\\s+pp_`));
    assert.equal(list.stdout.includes(secret), false);

    const server = await startServer(env);
    try {
      const get = () => fetch(`${server.url}/v1/templates`, { headers: { authorization: `Bearer ${secret}` } });
      assert.equal((await get()).status, 200);
      const revoked = podplate(['keys', 'revoke', id], env);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal((await get()).status, 401);
      assert.equal(podplate(['keys', 'revoke', id], env).code, 1, 'revoking twice fails');
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  test('usage errors exit 2 with the usage', () => {
    assert.match(podplate([], env).stderr, /Usage: podplate/);
    const refused = [['frobnicate'], ['keys', 'create'], ['keys', 'create', '--user', 'x', '--role', 'admin'], ['keys', 'revoke']];
    // An unknown flag of an admin command is a usage error too, not a stack trace.
    for (const args of [...refused, ['export', '--bogus'], ['import', '--input']]) {
      const r = podplate(args, env);
      assert.equal(r.code, 2, args.join(' '));
      // One line for the error, one saying where the usage is.
      assert.match(r.stderr, /^podplate: [^\n]+\n\(podplate [^\n]*--help[^\n]*\)\n$/, r.stderr);
    }
    const help = podplate(['--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Examples:/);
    // Each admin command says what it does and how it is called.
    for (const [args, usage] of [
      [['export', '--help'], /^podplate export \[--output FILE\]/],
      [['backup', '-h'], /^podplate backup FILE/],
      [['migrate', '--help'], /^podplate migrate: /],
      [['secrets', 'rotate', '--help'], /^podplate secrets rotate /],
    ] as const) {
      const r = podplate([...args], env);
      assert.equal(r.code, 0, args.join(' '));
      assert.match(r.stdout, usage);
    }
  });

  test('a bad setting stops the command with a clear message', () => {
    const r = podplate(['migrate'], { ...env, DB_POOL_SIZE: 'lots' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /DB_POOL_SIZE="lots"/);
  });
});
