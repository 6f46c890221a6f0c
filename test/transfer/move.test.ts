import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { DIALECTS } from '../support/harness.ts';
import { BIN, freePort, startServer } from '../support/process.ts';

// docs/operations.md's "Moving between databases", run as it is written: a SQLite install made as the README makes
// one (the key file beside the database, the first key in its file), with accounts and keys over the API, registry
// credentials, secrets, templates, an endpoint and its releases; then the recipe's shell block itself (its `npx
// podplate` and `npm start` are this checkout's), and every key gets the same answers from PostgreSQL.

const skip = DIALECTS.includes('postgres') ? false : 'TEST_DATABASE_URL is not set';

/** The recipe: the shell block of the section "Moving between databases". */
function recipe(): string {
  const page = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = page.slice(page.indexOf('## Moving between databases'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'the section has a shell block');
  return block;
}

interface Server {
  url: string;
}

async function call(server: Server, key: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, body: text ? JSON.parse(text) : undefined };
}

/** What every key is answered about the install, and what the platform reads of it: what both databases must agree on. */
async function observe(server: Server, keys: Record<string, string>, made: Record<string, string>): Promise<string[]> {
  const seen: string[] = [];
  const look = async (key: string, method: string, path: string, body?: unknown) => {
    const r = await call(server, key, method, path, body);
    seen.push(`${method} ${path} ${r.status} ${r.text}`);
  };
  for (const [who, key] of Object.entries(keys)) {
    seen.push(`--- ${who}`);
    await look(key, 'GET', '/v1/me');
    await look(key, 'GET', '/v1/templates?includePublicTemplates=true&includeEndpointBoundTemplates=true');
    await look(key, 'GET', `/v1/templates/${made.shared}?includePublicTemplates=true`);
    await look(key, 'GET', '/v1/containerregistryauth');
    await look(key, 'GET', '/v1/secrets');
    await look(key, 'GET', '/v1/endpoints');
    await look(key, 'GET', `/v1/endpoints/${made.endpoint}/releases`);
  }
  const platform = keys.platform as string;
  await look(platform, 'GET', `/v1/containerregistryauth/${made.auth}/credentials`);
  for (const account of ['alice', 'bob']) await look(platform, 'POST', `/v1/templates/${made.shared}/resolve`, { account });
  await look(keys.reader as string, 'POST', '/v1/templates', { name: 'refused', imageName: 'ubuntu' });
  return seen;
}

describe('moving a SQLite install to PostgreSQL, as docs/operations.md says', { skip }, () => {
  const database = `podplate_move_${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'podplate-move-'));
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  before(() => admin(`drop database if exists ${database}`));
  after(async () => {
    await admin(`drop database if exists ${database}`);
    rmSync(dir, { recursive: true, force: true });
  });

  test('SQLite with secrets and registry auths → export → import into PostgreSQL → started as written: the same answers', async () => {
    // The SQLite install, as `npm start` makes one in the project's folder: ./data/podplate.db and its key file.
    const sqlite = await startServer({ DATABASE_URL: 'sqlite:./data/podplate.db', BOOTSTRAP_KEY_FILE: '' }, { cwd: dir });
    const platform = readFileSync(join(dir, 'data', 'podplate.db.first-platform-key'), 'utf8').trim();
    const keys: Record<string, string> = { platform };
    const made: Record<string, string> = {};
    let before: string[];
    try {
      const ok = async (key: string, method: string, path: string, body?: unknown) => {
        const r = await call(sqlite, key, method, path, body);
        assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
        return r.body;
      };
      for (const name of ['alice', 'bob']) {
        await ok(platform, 'POST', '/v1/accounts', { name });
        keys[name] = (await ok(platform, 'POST', `/v1/accounts/${name}/keys`, { label: 'laptop' })).key;
      }
      const alice = keys.alice as string;
      const bob = keys.bob as string;
      keys.reader = (await ok(alice, 'POST', '/v1/accounts/alice/keys', { access: 'read', expiresAt: '2999-01-01T00:00:00Z' })).key;
      made.auth = (
        await ok(alice, 'POST', '/v1/containerregistryauth', { name: 'ghcr', username: 'octocat', password: 'ghp-s3cret-pw' })
      ).id;
      await ok(alice, 'PUT', '/v1/secrets/HF_TOKEN', { value: 'hf-alice-value' });
      await ok(bob, 'PUT', '/v1/secrets/HF_TOKEN', { value: 'hf-bob-value' });
      made.shared = (
        await ok(alice, 'POST', '/v1/templates', {
          name: 'needs a token',
          imageName: 'ghcr.io/acme/sdxl:1',
          isPublic: true,
          containerRegistryAuthId: made.auth,
          env: { HF_TOKEN: '{{ secret.HF_TOKEN }}' },
        })
      ).id;
      const worker = await ok(bob, 'POST', '/v1/templates', { name: 'worker', imageName: 'acme/worker:1', isServerless: true });
      made.endpoint = (await ok(bob, 'POST', '/v1/endpoints', { name: 'e', templateId: worker.id, workersMin: 0, workersMax: 2 })).id;
      await ok(bob, 'POST', `/v1/templates/${worker.id}/update`, { imageName: 'acme/worker:2' });
      before = await observe(sqlite, keys, made);
      assert.match(before.join('\n'), /"password":"ghp-s3cret-pw"/);
      assert.match(before.join('\n'), /"HF_TOKEN":"hf-bob-value"/);
    } finally {
      // 1. Stop writes to the SQLite install.
      assert.equal(await sqlite.stop(), 0);
    }

    // 2 and 3: the recipe's block as written, this checkout's `npx podplate` and `npm start` standing in.
    const postgres = new URL(process.env.TEST_DATABASE_URL as string);
    const script = recipe()
      .replace(/(createdb .*) podplate$/m, `$1 ${database}`)
      .replaceAll('postgres://postgres@127.0.0.1:5432/podplate', `postgres://${postgres.username}@${postgres.host}/${database}`);
    assert.match(script, /SECRETS_KEY=\$\(cat \.\/data\/podplate\.db\.secrets-key\)/, 'the recipe carries the key over');
    const port = await freePort();
    const shell = spawn('bash', ['-euc', `npx() { shift; "$NODE" "$BIN" "$@"; }\nnpm() { exec "$NODE" "$BIN" serve; }\n${script}`], {
      cwd: dir,
      env: {
        ...process.env,
        NODE: process.execPath,
        BIN,
        HOST: '127.0.0.1',
        PORT: String(port),
        BOOTSTRAP_KEY_FILE: join(dir, 'no-key'),
        // As every test server: no image is checked at a registry the test did not start (test/support/process.ts).
        IMAGE_CHECK: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    shell.stdout.on('data', (d) => {
      output += d;
    });
    shell.stderr.on('data', (d) => {
      output += d;
    });
    const exited = new Promise<number | null>((resolve) => shell.once('exit', (code) => resolve(code)));
    const server = { url: `http://127.0.0.1:${port}` };
    try {
      for (const deadline = Date.now() + 60_000; ; ) {
        assert.equal(shell.exitCode, null, `the recipe stopped before serving:\n${output}`);
        try {
          if ((await fetch(`${server.url}/healthz`)).ok) break;
        } catch {}
        assert.ok(Date.now() < deadline, `the recipe's server did not start:\n${output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.match(output, /Exported \d+ templates/);
      assert.match(output, /Imported \d+ templates/);
      const moved = await observe(server, keys, made);
      const differs = before.findIndex((answer, i) => moved[i] !== answer);
      if (differs >= 0) assert.equal(moved[differs], before[differs], `answer ${differs} differs`);
      assert.equal(moved.length, before.length);
      assert.equal(/first-platform-key|no API key existed/.test(output), false, 'the keys came along: no new first key');
    } finally {
      shell.kill('SIGTERM');
      assert.equal(await exited, 0, output);
    }
  });
});
