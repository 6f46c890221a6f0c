import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { freshDatabase } from './support/harness.ts';
import { BIN, freePort, podplate, startServer } from './support/process.ts';

// The server process: its first platform key (never into a log), its log (every line JSON, one line per request),
// and a start that can't go on (one fatal line naming the setting, exit 1).

const KEY = /pp_[A-Za-z0-9_-]{43}/;
const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('first start off a terminal: the platform key goes to a 0600 file beside the database, its path logged, never the key; one JSON line per request; SIGTERM exits 0', async () => {
  const db = await freshDatabase('sqlite');
  const file = `${db.url.slice('sqlite:'.length)}.first-platform-key`;
  try {
    // BOOTSTRAP_KEY_FILE unset: the default, beside the SQLite file.
    const first = await startServer({ DATABASE_URL: db.url, BOOTSTRAP_KEY_FILE: '' });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const key = readFileSync(file, 'utf8').trim();
    assert.match(key, new RegExp(`^${KEY.source}$`));
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const create = await fetch(`${first.url}/v1/templates`, {
      method: 'POST',
      headers: { ...headers, 'x-request-id': 'req-abc' },
      body: JSON.stringify({ name: 'official', imageName: 'ubuntu' }),
    });
    assert.equal(create.status, 200);
    assert.equal((await create.json()).isPlatform, true);
    const missing = await fetch(`${first.url}/v1/templates/nothing-here?includePublicTemplates=true`, {
      headers: { ...headers, 'x-request-id': 'req-def' },
    });
    assert.equal(missing.status, 404);
    assert.equal(await first.stop('SIGTERM'), 0);

    const lines = jsonLines(first.stdout());
    const told = lines.find((l) => l.file === file);
    assert.ok(told, 'the file is named in the log');
    assert.equal(told.level, 40);
    assert.match(String(told.msg), /written to .*first-platform-key \(mode 0600\)/);
    for (const [reqId, route, status] of [
      ['req-abc', '/v1/templates', 200],
      ['req-def', '/v1/templates/:templateId', 404],
    ] as const) {
      const of = lines.filter((l) => l.reqId === reqId);
      assert.equal(of.length, 1, `one line for ${reqId}: ${JSON.stringify(of)}`);
      const [line] = of as [Record<string, unknown>];
      assert.equal(line.msg, 'request');
      assert.equal(line.route, route);
      assert.equal(line.status, status);
      assert.equal(line.account, 'platform');
      assert.match(String(line.keyId), /^key_[0-9a-z]{16}$/);
      assert.equal(typeof line.durationMs, 'number');
    }
    assert.ok(lines.some((l) => l.msg === 'shutting down: draining in-flight requests'));
    assert.equal(first.stdout().includes(key) || first.stderr().includes(key), false, 'the key is in no output');
    assert.equal(KEY.test(first.stderr()), false);

    const second = await startServer({ DATABASE_URL: db.url, BOOTSTRAP_KEY_FILE: '' });
    assert.equal(readFileSync(file, 'utf8').trim(), key, 'made once, the file left as it was');
    assert.equal(
      jsonLines(second.stdout()).some((l) => l.file === file),
      false,
    );
    assert.equal(await second.stop('SIGINT'), 0);
  } finally {
    await db.drop();
  }
});

test('a key file already there on a first start: one fatal line naming BOOTSTRAP_KEY_FILE, exit 1, no key made, the file untouched', async () => {
  const db = await freshDatabase('sqlite');
  const dir = mkdtempSync(join(tmpdir(), 'podplate-key-file-'));
  try {
    const file = join(dir, 'first-key');
    writeFileSync(file, 'an earlier install\n');
    const r = podplate(['serve'], { DATABASE_URL: db.url, BOOTSTRAP_KEY_FILE: file, PORT: String(await freePort()) });
    assert.equal(r.code, 1);
    const [fatal, ...more] = jsonLines(r.stdout).filter((l) => l.level === 60);
    assert.equal(more.length, 0);
    assert.deepEqual(fatal?.settings, ['BOOTSTRAP_KEY_FILE']);
    assert.match(String(fatal?.msg), /BOOTSTRAP_KEY_FILE .*first-key exists, and the database holds no key/);
    assert.equal(readFileSync(file, 'utf8'), 'an earlier install\n');
    assert.equal(podplate(['keys', 'list'], { DATABASE_URL: db.url }).stdout.trim().split('\n').length, 1, 'no key but the header');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  }
});

test('first start on a terminal: the key is shown once on it, pretty log lines, no key file; with BOOTSTRAP_KEY_FILE set, the file', async () => {
  for (const configured of [false, true]) {
    const db = await freshDatabase('sqlite');
    const dir = mkdtempSync(join(tmpdir(), 'podplate-tty-'));
    const file = configured ? join(dir, 'first-key') : `${db.url.slice('sqlite:'.length)}.first-platform-key`;
    try {
      const port = await freePort();
      // `script` runs the server on a pseudo-terminal: its stdout and stderr are a terminal.
      const child = spawn('script', ['-qfec', `${process.execPath} ${BIN} serve`, '/dev/null'], {
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          PORT: String(port),
          HOST: '127.0.0.1',
          BOOTSTRAP_KEY_FILE: configured ? file : '',
          NO_COLOR: '1',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let seen = '';
      child.stdout.on('data', (d) => {
        seen += d;
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      for (const deadline = Date.now() + 30_000; !seen.includes('Server listening'); ) {
        assert.ok(Date.now() < deadline, seen);
        await new Promise((r) => setTimeout(r, 100));
      }
      child.stdin.write('\x03'); // Ctrl-C on the terminal: SIGINT, a graceful stop
      await exited;
      assert.match(seen, /INFO.*Server listening/, 'pretty lines on a terminal');
      assert.equal(/^\{"level"/m.test(seen), false, 'not JSON on a terminal');
      if (configured) {
        assert.equal(KEY.test(seen), false, 'not on the terminal');
        assert.match(readFileSync(file, 'utf8'), new RegExp(`^${KEY.source}\n$`));
      } else {
        assert.match(seen, /No API key existed, so a platform key was created\. It is shown this once; store it now:/);
        assert.equal((seen.match(new RegExp(KEY.source, 'g')) ?? []).length, 1, 'shown once');
        assert.equal(existsSync(file), false, 'no file when a terminal showed it');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await db.drop();
    }
  }
});

test('a bad setting, a missing or unreachable database, a port in use: one fatal JSON line naming the setting, exit 1, no stack trace', async () => {
  const db = await freshDatabase('sqlite');
  try {
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL', /^LOG_LEVEL="verbose": must be one of fatal, error, warn, info, debug, trace, silent$/],
      [{ PORT: 'eighty' }, 'PORT', /^PORT="eighty": must be a whole number from 0 to 65535$/],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL', /^DATABASE_URL="mysql:\/\/x": is not valid: `sqlite:<path>` or `postgres:/],
      [
        {
          DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/nowhere',
          DB_WAIT_SECONDS: '1',
          SECRETS_KEY: 'dGVzdC1vbmx5IHNlY3JldHMga2V5LCAzMiBieXRlcyE=',
        },
        'DATABASE_URL',
        /^DATABASE_URL=postgres:\/\/postgres@127\.0\.0\.1:1\/nowhere: the database is not reachable \(.*ECONNREFUSED.*\) after 1 s \(DB_WAIT_SECONDS\)$/,
      ],
    ];
    if (process.env.TEST_DATABASE_URL) {
      const missing = new URL(process.env.TEST_DATABASE_URL);
      missing.pathname = '/podplate_no_such_database';
      cases.push([
        { DATABASE_URL: missing.toString(), SECRETS_KEY: 'dGVzdC1vbmx5IHNlY3JldHMga2V5LCAzMiBieXRlcyE=' },
        'DATABASE_URL',
        /^DATABASE_URL=postgres:.*\/podplate_no_such_database: that database does not exist: create it \(createdb\), or name an existing one$/,
      ]);
    }
    for (const [env, setting, message] of cases) {
      const r = podplate(['serve'], { DATABASE_URL: db.url, PORT: String(await freePort()), ...env });
      assert.equal(r.code, 1, `${JSON.stringify(env)}: ${r.stdout}${r.stderr}`);
      const lines = jsonLines(r.stdout);
      const fatal = lines.filter((l) => l.level === 60);
      assert.equal(fatal.length, 1, r.stdout);
      assert.deepEqual(fatal[0]?.settings, [setting]);
      assert.match(String(fatal[0]?.msg), message);
      assert.equal(r.stderr, '', 'nothing but the log');
      assert.equal(/\n\s+at /.test(r.stdout), false, 'no stack trace');
      assert.equal(r.stdout.includes('hunter2'), false, 'no password');
    }

    const server = await startServer({ DATABASE_URL: db.url });
    try {
      const port = new URL(server.url).port;
      const r = podplate(['serve'], { DATABASE_URL: db.url, PORT: port });
      assert.equal(r.code, 1);
      const fatal = jsonLines(r.stdout).filter((l) => l.level === 60);
      assert.deepEqual(
        fatal.map((l) => [l.settings, l.msg]),
        [[['PORT'], `PORT=${port} is in use by another process: choose another PORT`]],
      );
    } finally {
      await server.stop();
    }
  } finally {
    await db.drop();
  }
});

test('an idle connection is kept only as long as the Keep-Alive header says, which is less than the server waits', async () => {
  const db = await freshDatabase('sqlite');
  try {
    const server = await startServer({ DATABASE_URL: db.url, REQUEST_TIMEOUT_MS: '4000' });
    try {
      const response = await fetch(`${server.url}/healthz`);
      await response.arrayBuffer();
      const timeout = Number(/timeout=(\d+)/.exec(response.headers.get('keep-alive') ?? '')?.[1]);
      assert.ok(timeout >= 1 && timeout * 1000 < 4000, `keep-alive: ${response.headers.get('keep-alive')}`);
    } finally {
      await server.stop();
    }
  } finally {
    await db.drop();
  }
});
