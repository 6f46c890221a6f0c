import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { BIN, podplate, type ServerProcess, startServer } from '../support/process.ts';
import { TOKENS } from '../support/tokens.ts';

// podplate secrets set|list|delete against a real server, the value on stdin only; env values masked in what the
// template commands print unless --show-values (--json too); `secrets rotate` is still the admin's.

const VALUE = 'cli-sentinel-3b9e-secret-value';

/**
 * One request on a connection of its own: the commands run with spawnSync, which blocks this process's event loop, so
 * a pooled keep-alive socket the server closed meanwhile would still look open to fetch.
 */
function call(server: ServerProcess, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const outgoing = httpRequest(`${server.url}${path}`, { method, headers, agent: false }, (incoming) => {
      let text = '';
      incoming.on('data', (chunk) => {
        text += chunk;
      });
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    outgoing.on('error', reject);
    outgoing.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

forEachDialect('podplate secrets', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  let home: string;
  let key: string;
  let platformKey: string;
  let env: Record<string, string>;

  const run = (args: string[], input = '') => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: { ...process.env, PODPLATE_URL: server.url, PODPLATE_API_KEY: key, XDG_CONFIG_HOME: join(home, 'config'), HOME: home, ...env },
      input,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const ok = (args: string[], input = '') => {
    const r = run(args, input);
    assert.equal(r.code, 0, `podplate ${args.join(' ')}\n${r.stderr}`);
    return r;
  };

  before(async () => {
    db = await freshDatabase(dialect);
    home = mkdtempSync(join(tmpdir(), 'podplate-cli-secrets-'));
    const dbEnv = { DATABASE_URL: db.url, KEY_CACHE_TTL_MS: '0' };
    key = podplate(['keys', 'create', '--user', 'alice'], dbEnv).stdout.trim();
    platformKey = podplate(['keys', 'create', '--user', 'ops', '--role', 'platform'], dbEnv).stdout.trim();
    server = await startServer(dbEnv);
    env = {};
  });
  after(async () => {
    await server.stop();
    await db.drop();
    rmSync(home, { recursive: true, force: true });
  });

  test('set reads the value from stdin (never a flag), list shows names only, delete removes', async () => {
    const set = ok(['secrets', 'set', 'HF_TOKEN', '--value-stdin'], `${VALUE}\n`);
    assert.match(set.stdout, /Set secret HF_TOKEN\./);
    assert.match(set.stderr, /\{\{ secret\.HF_TOKEN \}\}/);
    ok(['secrets', 'set', 'OTHER', '--value-stdin'], 'x');
    const list = ok(['secrets', 'list']);
    assert.match(list.stdout, /^NAME\s+CREATED\s+UPDATED/);
    assert.match(list.stdout, /HF_TOKEN/);
    assert.equal(list.stdout.includes(VALUE), false);
    const listed = JSON.parse(ok(['secrets', 'list', '--json']).stdout);
    assert.deepEqual(listed.map((s: { name: string }) => s.name).sort(), ['HF_TOKEN', 'OTHER']);

    // The value is resolved for alice: it was stored without its trailing newline.
    const t = await call(server, key, 'POST', '/v1/templates', { name: 't', imageName: 'ubuntu', env: { T: '{{ secret.HF_TOKEN }}' } });
    const resolved = await call(server, platformKey, 'POST', `/v1/templates/${t.body.id}/resolve`, { account: 'alice' });
    assert.equal(resolved.body.template.env.T, VALUE);

    ok(['secrets', 'delete', 'OTHER', '--yes']);
    const gone = run(['secrets', 'delete', 'OTHER', '--yes']);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /404|no secret named OTHER/i);
  });

  test('stdin from a slow writer is waited for: secrets set, registry-auth create, templates create -f -', async () => {
    // The writer sends after the command has started reading: a read of fd 0 at once failed with EAGAIN.
    const piped = (writer: string, args: string[]) => {
      const r = spawnSync('bash', ['-c', `(sleep 0.5; ${writer}) | "$NODE" "$BIN" "$@"`, 'piped', ...args], {
        env: { ...process.env, NODE: process.execPath, BIN, PODPLATE_URL: server.url, PODPLATE_API_KEY: key, HOME: home },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(r.status, 0, `podplate ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    assert.match(piped("printf 'slow-value'", ['secrets', 'set', 'SLOW', '--value-stdin']), /Set secret SLOW\./);
    assert.match(piped("printf 'pw'", ['registry-auth', 'create', '--name', 'slow', '--username', 'u', '--password-stdin']), /Created/);
    const made = JSON.parse(piped("printf 'name: slow one\\nimageName: ubuntu\\n'", ['templates', 'create', '-f', '-', '--json']));
    assert.equal(made.name, 'slow one');
  });

  test('usage errors: no --value-stdin, an empty value, a flag value, a bad name', () => {
    assert.equal(run(['secrets', 'set', 'A']).code, 2);
    assert.equal(run(['secrets', 'set', 'A', '--value-stdin'], '\n').code, 2);
    assert.equal(run(['secrets', 'set', 'A', '--value', 'x']).code, 2);
    const bad = run(['secrets', 'set', 'bad-name', '--value-stdin'], 'v');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /name/);
    assert.equal(run(['secrets']).code, 2);
  });

  test('templates get masks env values but references, unless --show-values, --json too', async () => {
    const token = TOKENS['Hugging Face'] as string;
    const created = await call(server, key, 'POST', '/v1/templates', {
      name: 'masked',
      imageName: 'ubuntu',
      env: { PLAIN_TOKEN: token, REF: '{{ secret.HF_TOKEN }}', EMPTY: '' },
    });
    const id = created.body.id;
    const shown = ok(['templates', 'get', id]).stdout;
    assert.equal(shown.includes(token), false);
    assert.match(shown, /PLAIN_TOKEN=••••••••/);
    assert.match(shown, /REF=\{\{ secret\.HF_TOKEN \}\}/);
    assert.ok(ok(['templates', 'get', id, '--show-values']).stdout.includes(`PLAIN_TOKEN=${token}`));
    assert.equal(JSON.parse(ok(['templates', 'get', id, '--json']).stdout).env.PLAIN_TOKEN, '••••••••');
    assert.equal(JSON.parse(ok(['templates', 'get', id, '--json', '--show-values']).stdout).env.PLAIN_TOKEN, token);

    await call(server, key, 'PATCH', `/v1/templates/${id}`, { env: { PLAIN_TOKEN: `${token}x`.slice(0, -1), REF: 'changed' } });
    await call(server, key, 'PATCH', `/v1/templates/${id}`, { env: { PLAIN_TOKEN: TOKENS['AWS access key id'] } });
    // -o wide: every column in full, whatever the terminal's width.
    const revisions = ok(['templates', 'revisions', id, '-o', 'wide']).stdout;
    assert.equal(revisions.includes(TOKENS['AWS access key id'] as string), false);
    assert.equal(revisions.includes(token.slice(3)), false);
    assert.match(revisions, /env: changed PLAIN_TOKEN/, 'an env change names the variable, never its value');
    assert.ok(ok(['templates', 'revisions', id, '--show-values', '-o', 'wide']).stdout.includes(token));
  });

  test('secrets rotate and new-key are still the admin commands', () => {
    const made = podplate(['secrets', 'new-key'], {});
    assert.equal(made.code, 0);
    assert.match(made.stdout.trim(), /^[A-Za-z0-9+/]{43}=$/);
  });
});
