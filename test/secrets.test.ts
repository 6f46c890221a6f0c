import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { Keyring, keyIdOf, newKeyText, parseKey } from '../src/sealing/keyring.ts';
import { dialectFor } from '../src/store/dialect.ts';
import { type Database, forEachDialect, freshDatabase } from './support/harness.ts';
import { call, freePort, podplate, startServer } from './support/process.ts';

// The keys that seal secrets, from the processes' side: what a server refuses to start with, the SQLite key file,
// rotation with `podplate secrets rotate`, and passwords kept out of the logs even at trace level.

const kid = (key: string) => keyIdOf(parseKey(key, 'test'));

/**
 * `podplate serve` expected to refuse to start: its exit code, and all it wrote (`stderr`: stdout and stderr). The
 * refusal is one fatal line of its JSON log.
 */
const refusedStart = async (env: Record<string, string>) => {
  const r = podplate(['serve'], { PORT: String(await freePort()), ...env });
  const lines = r.stdout.split('\n').filter(Boolean);
  assert.equal(lines.filter((line) => JSON.parse(line).level === 60).length, 1, `one fatal line: ${r.stdout}${r.stderr}`);
  return { code: r.code, stderr: r.stdout + r.stderr };
};

async function sealedValues(url: string): Promise<string[]> {
  const raw = new Kysely<any>({ dialect: dialectFor(url).kysely });
  try {
    const auths = (await sql<{ sealed: string }>`select password as sealed from registry_auths`.execute(raw)).rows;
    const check = (await sql<{ sealed: string }>`select sealed from secret_key_check`.execute(raw)).rows;
    const secrets = (await sql<{ sealed: string }>`select value as sealed from secrets`.execute(raw)).rows;
    return [...check, ...auths, ...secrets].map((r) => r.sealed);
  } finally {
    await raw.destroy();
  }
}

forEachDialect('secrets keys of the processes', (dialect) => {
  let db: Database;
  let users: { alice: string; bob: string; ops: string };
  before(async () => {
    db = await freshDatabase(dialect);
    const env = { DATABASE_URL: db.url };
    const made = (user: string, role = 'user') => podplate(['keys', 'create', '--user', user, '--role', role], env).stdout.trim();
    users = { alice: made('alice'), bob: made('bob'), ops: made('ops', 'platform') };
  });
  after(() => db.drop());

  test('a password is never in the logs, even at LOG_LEVEL=trace', async () => {
    const secret = 'log-sentinel-94c1b2-password';
    const server = await startServer({ DATABASE_URL: db.url, LOG_LEVEL: 'trace', SECRETS_KEY: newKeyText() });
    try {
      const created = await call(server, users.alice, 'POST', '/v1/containerregistryauth', {
        name: 'logged',
        username: 'u',
        password: secret,
      });
      assert.equal(created.status, 200);
      const refused = await call(server, users.alice, 'POST', '/v1/containerregistryauth', { name: '', username: 'u', password: secret });
      assert.equal(refused.status, 400);
      const read = await call(server, users.ops, 'GET', `/v1/containerregistryauth/${created.body.id}/credentials`);
      assert.equal(read.body.password, secret);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const logs = server.stdout() + server.stderr();
    assert.ok(logs.split('\n').length > 10, 'trace logging was on');
    assert.equal(logs.includes(secret), false);
    const audit = server
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'registry credentials read');
    assert.ok(audit, 'who read which credentials is logged');
    assert.match(audit.keyId, /^key_/);
    // The log-test server used its own key: the key check now names it, so the rotation test starts on a clean slate.
    const raw = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
    await sql`delete from secret_key_check`.execute(raw);
    await sql`delete from registry_auths`.execute(raw);
    await raw.destroy();
  });

  test('rotation: the old key in SECRETS_KEY_PREVIOUS, podplate secrets rotate, and only the new key is needed', async () => {
    const [oldKey, newKey] = [newKeyText(), newKeyText()];
    const base = { DATABASE_URL: db.url };
    const passwords: Record<string, string> = {};
    const first = await startServer({ ...base, SECRETS_KEY: oldKey });
    try {
      for (const user of ['alice', 'bob'] as const) {
        const r = await call(first, users[user], 'POST', '/v1/containerregistryauth', {
          name: 'r',
          username: user,
          password: `${user}-p4ss`,
        });
        passwords[r.body.id] = `${user}-p4ss`;
      }
      assert.equal((await call(first, users.alice, 'PUT', '/v1/secrets/HF_TOKEN', { value: 'alice-hf-s3cret' })).status, 201);
    } finally {
      await first.stop();
    }
    assert.ok((await sealedValues(db.url)).every((v) => v.startsWith(`v1.${kid(oldKey)}.`)));

    // The new key alone opens nothing that is there: the server refuses, and so does a rotation, naming what it can't open.
    const refused = await refusedStart({ ...base, SECRETS_KEY: newKey });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, new RegExp(`sealed under key ${kid(oldKey)}, but this process has ${kid(newKey)}`));
    const blind = podplate(['secrets', 'rotate'], { ...base, SECRETS_KEY: newKey });
    assert.equal(blind.code, 1);
    assert.match(blind.stderr, /open with neither SECRETS_KEY nor SECRETS_KEY_PREVIOUS/);
    for (const id of Object.keys(passwords)) assert.match(blind.stderr, new RegExp(id));

    // During a rotation every process runs with both keys: old secrets open, new ones are sealed under the new key.
    const both = { ...base, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey };
    const during = await startServer(both);
    try {
      for (const [id, password] of Object.entries(passwords)) {
        assert.equal((await call(during, users.ops, 'GET', `/v1/containerregistryauth/${id}/credentials`)).body.password, password);
      }
      const r = await call(during, users.alice, 'POST', '/v1/containerregistryauth', {
        name: 'during',
        username: 'u',
        password: 'new-p4ss',
      });
      passwords[r.body.id] = 'new-p4ss';
    } finally {
      await during.stop();
    }
    const rotated = podplate(['secrets', 'rotate'], both);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.match(
      rotated.stderr,
      /Sealed 4 secrets again under SECRETS_KEY/,
      'two passwords, a secret and the key check; the third password was new',
    );
    assert.match(rotated.stderr, /registry auth passwords: 2 sealed again, 1 already under the key/);
    assert.match(rotated.stderr, /secrets: 1 sealed again/);
    assert.ok((await sealedValues(db.url)).every((v) => v.startsWith(`v1.${kid(newKey)}.`)));
    const again = podplate(['secrets', 'rotate'], both);
    assert.match(again.stderr, /Sealed 0 secrets again/);

    const after = await startServer({ ...base, SECRETS_KEY: newKey });
    try {
      for (const [id, password] of Object.entries(passwords)) {
        assert.equal((await call(after, users.ops, 'GET', `/v1/containerregistryauth/${id}/credentials`)).body.password, password);
      }
      const t = await call(after, users.alice, 'POST', '/v1/templates', {
        name: 't',
        imageName: 'ubuntu',
        env: { T: '{{ secret.HF_TOKEN }}' },
      });
      const resolved = await call(after, users.ops, 'POST', `/v1/templates/${t.body.id}/resolve`, { account: 'alice' });
      assert.equal(resolved.body.template.env.T, 'alice-hf-s3cret', 'a secret sealed under the old key opens after the rotation');
    } finally {
      await after.stop();
    }
    const old = await refusedStart({ ...base, SECRETS_KEY: oldKey });
    assert.equal(old.code, 1);
    assert.match(old.stderr, /set SECRETS_KEY to the key every other process uses/);
  });

  test('a malformed key stops the start with the rule, never repeating the value', async () => {
    const bad = 'not-a-key-7f3a9c';
    for (const name of ['SECRETS_KEY', 'SECRETS_KEY_PREVIOUS']) {
      const r = await refusedStart({ DATABASE_URL: db.url, SECRETS_KEY: newKeyText(), [name]: bad });
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`${name} must be 32 random bytes in base64`));
      assert.equal(r.stderr.includes(bad), false);
    }
    const alone = await refusedStart({ DATABASE_URL: db.url, SECRETS_KEY: '', SECRETS_KEY_PREVIOUS: newKeyText() });
    assert.equal(alone.code, 1);
    assert.match(alone.stderr, /SECRETS_KEY_PREVIOUS is set without SECRETS_KEY/);
  });

  if (dialect === 'postgres') {
    test('PostgreSQL without SECRETS_KEY refuses to start, saying how to make one', async () => {
      const r = await refusedStart({ DATABASE_URL: db.url, SECRETS_KEY: '' });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /SECRETS_KEY must be set on PostgreSQL/);
      assert.match(r.stderr, /openssl rand -base64 32/);
      const made = podplate(['secrets', 'new-key'], {});
      assert.equal(made.code, 0);
      assert.doesNotThrow(() => Keyring.fromText(made.stdout.trim()));
    });
  }

  if (dialect === 'sqlite') {
    test('SQLite without SECRETS_KEY makes a 0600 key file beside the database on first start, and reuses it', async () => {
      const fresh = await freshDatabase('sqlite');
      try {
        const file = `${fresh.url.replace(/^sqlite:/, '')}.secrets-key`;
        const env = { DATABASE_URL: fresh.url };
        const ops = podplate(['keys', 'create', '--user', 'ops', '--role', 'platform'], env).stdout.trim();
        const alice = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
        assert.equal(existsSync(file), false, 'the admin commands make no key');
        const first = await startServer(env);
        let id: string;
        try {
          assert.match(
            first.stdout(),
            /SECRETS_KEY is not set, so secrets are encrypted with a new key, kept in .*\.secrets-key \(mode 0600\)/,
          );
          assert.equal(statSync(file).mode & 0o777, 0o600);
          assert.equal(dirname(file), dirname(fresh.url.replace(/^sqlite:/, '')));
          id = (await call(first, alice, 'POST', '/v1/containerregistryauth', { name: 'a', username: 'u', password: 'kept' })).body.id;
        } finally {
          await first.stop();
        }
        const second = await startServer(env);
        try {
          assert.doesNotMatch(second.stdout(), /new key/);
          assert.equal((await call(second, ops, 'GET', `/v1/containerregistryauth/${id}/credentials`)).body.password, 'kept');
        } finally {
          await second.stop();
        }
        // SECRETS_KEY, when set, is the key; the file is neither read nor needed.
        const key = readFileSync(file, 'utf8').trim();
        rmSync(file);
        const withEnv = await startServer({ ...env, SECRETS_KEY: key });
        try {
          assert.equal((await call(withEnv, ops, 'GET', `/v1/containerregistryauth/${id}/credentials`)).body.password, 'kept');
        } finally {
          await withEnv.stop();
        }
        assert.equal(existsSync(file), false);
        // A lost key file is not silently replaced: the new key opens nothing, so the server refuses.
        const lost = await refusedStart(env);
        assert.equal(lost.code, 1);
        assert.match(lost.stderr, /the secrets in this database were sealed under key/);
      } finally {
        await fresh.drop();
      }
    });
  }
});
