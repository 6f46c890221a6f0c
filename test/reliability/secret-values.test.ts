import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { newKeyText } from '../../src/sealing/keyring.ts';
import { eventually } from '../support/eventually.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';

// A secret's value is in plain text nowhere but in the one answer that resolves a template for a launch: not in the
// logs of a real `podplate serve` at LOG_LEVEL=trace, not in any other response, not in revisions, diffs, releases or
// the webhooks' outbox, not in the SQLite file (with its WAL) nor in a pg_dump of the database.

const ALICE = 'sentinel-7c1e0b-alice-secret-value';
const ALICE_OLD = 'sentinel-a90d13-replaced-value';
const BOB = 'sentinel-52fa8e-bob-secret-value';
const SENTINELS = [ALICE, ALICE_OLD, BOB];

forEachDialect('secret values in plain text', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  const keys: Record<string, string> = {};
  /** Every response body but the resolves'. */
  const answers: string[] = [];
  let resolvedForBob = '';

  const send = async (key: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${keys[key]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, text, body: text && r.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
  };
  const ok = async (key: string, method: string, path: string, body?: unknown) => {
    const r = await send(key, method, path, body);
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
    answers.push(r.text);
    return r.body;
  };

  before(async () => {
    db = await freshDatabase(dialect);
    const env = { DATABASE_URL: db.url, SECRETS_KEY: newKeyText() };
    for (const [name, role] of [
      ['alice', 'user'],
      ['bob', 'user'],
      ['carol', 'user'],
      ['ops', 'platform'],
    ] as const) {
      keys[name] = podplate(['keys', 'create', '--user', name, '--role', role], env).stdout.trim();
    }
    server = await startServer({ ...env, LOG_LEVEL: 'trace', RATE_LIMIT_PER_MINUTE: '0' });

    await ok('alice', 'PUT', '/v1/secrets/HF_TOKEN', { value: ALICE_OLD });
    await ok('alice', 'PUT', '/v1/secrets/HF_TOKEN', { value: ALICE });
    await ok('bob', 'PUT', '/v1/secrets/HF_TOKEN', { value: BOB });
    await ok('alice', 'GET', '/v1/secrets');
    // Refused writes carrying a value: a bad name, a value too long, a body that is not JSON.
    for (const [path, body] of [
      ['/v1/secrets/bad-name', { value: ALICE }],
      ['/v1/secrets/LONG', { value: ALICE.repeat(2000) }],
      ['/v1/secrets/HF_TOKEN', `{"value": "${ALICE}"`],
      ['/v1/secrets/HF_TOKEN', { value: ALICE, extra: ALICE }],
    ] as const) {
      const r = await send('alice', 'PUT', path, body);
      assert.ok(r.status >= 400 && r.status < 500, `${path}: ${r.status}`);
      answers.push(r.text);
    }
    // A Serverless template bound to an endpoint, given a reference by an update: a revision, a diff, a release, a webhook.
    const t = await ok('alice', 'POST', '/v1/templates', { name: 'sdxl', imageName: 'acme/sdxl:1', isServerless: true, isPublic: true });
    await ok('alice', 'POST', '/v1/endpoints', { name: 'e', templateId: t.id });
    await ok('alice', 'PATCH', `/v1/templates/${t.id}`, { env: { HF_TOKEN: '{{ secret.HF_TOKEN }}' } });
    await ok('alice', 'GET', `/v1/templates/${t.id}/revisions`);
    await ok('alice', 'GET', `/v1/templates/${t.id}?includeEndpointBoundTemplates=true`);
    const forBob = await send('ops', 'POST', `/v1/templates/${t.id}/resolve`, { account: 'bob' });
    assert.equal(forBob.status, 200, forBob.text);
    resolvedForBob = forBob.text;
    const forCarol = await send('ops', 'POST', `/v1/templates/${t.id}/resolve`, { account: 'carol' });
    assert.equal(forCarol.status, 422);
    answers.push(forCarol.text);
    const endpoints = await ok('alice', 'GET', '/v1/endpoints');
    await ok('alice', 'GET', `/v1/endpoints/${endpoints[0].id}/releases`);
    await ok('alice', 'DELETE', '/v1/secrets/HF_TOKEN');
  });
  after(async () => {
    await server?.stop();
    await db?.drop();
  });

  test('the resolve answers the launching account its own value, and nothing else answers any', () => {
    assert.equal(JSON.parse(resolvedForBob).template.env.HF_TOKEN, BOB);
    assert.equal(resolvedForBob.includes(ALICE), false);
    assert.ok(answers.length > 15);
    for (const text of answers) for (const s of SENTINELS) assert.equal(text.includes(s), false, text.slice(0, 200));
  });

  test('no log line holds a value, even at LOG_LEVEL=trace; who resolved what for whom is logged', async () => {
    // The log is written in blocks, at least every 250 ms (src/logger.ts).
    await eventually('the resolve is logged', 5000, async () => server.stdout().includes('"msg":"template resolved"'));
    const logs = server.stdout() + server.stderr();
    assert.ok(logs.split('\n').length > 30, 'trace logging was on');
    for (const s of SENTINELS) assert.equal(logs.includes(s), false, s);
    const audit = server
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((entry) => entry.msg === 'template resolved');
    assert.equal(audit?.account, 'bob');
  });

  if (dialect === 'sqlite') {
    test('the SQLite file, its WAL and shared memory hold no value', () => {
      const dir = dirname(db.url.replace(/^sqlite:/, ''));
      const everything = Buffer.concat(
        readdirSync(dir)
          .filter((f) => f.startsWith('podplate.db'))
          .map((f) => readFileSync(join(dir, f))),
      );
      assert.ok(everything.includes(Buffer.from('secrets_owner_name_unique')), 'the table is there');
      for (const s of SENTINELS) {
        assert.equal(everything.includes(Buffer.from(s)), false, s);
        assert.equal(everything.includes(Buffer.from(s, 'utf16le')), false, s);
      }
    });
  } else {
    test('a pg_dump of the database holds no value', () => {
      const url = new URL(db.url);
      const schema = /search_path=(\S+)/.exec(url.searchParams.get('options') ?? '')?.[1] as string;
      url.searchParams.delete('options');
      const dump = execFileSync('/usr/bin/pg_dump', ['--dbname', url.toString(), '--schema', schema], {
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      });
      assert.match(dump, /COPY \S+\.secrets /);
      assert.match(dump, /\tHF_TOKEN\tv1\./, "bob's secret is there, sealed");
      for (const s of SENTINELS) assert.equal(dump.includes(s), false, s);
    });
  }
});
