import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freshDatabase } from './support/harness.ts';
import { freePort, podplate } from './support/process.ts';

// `npm start`, as the README runs it, stopped by a SIGTERM sent to npm: npm 11 runs the script through `sh -c`, and a
// shell that does not pass the signal on left the server running, orphaned. The script `exec`s the server, so the
// signal reaches it: it drains what is in flight and exits, and npm with it.

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('SIGTERM to `npm start`: the request in flight is answered, the server exits 0, and so does npm; nothing is left running', async () => {
  const db = await freshDatabase('sqlite');
  try {
    const env = { DATABASE_URL: db.url };
    const key = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
    const port = await freePort();
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npm.stdout.on('data', (d) => {
      out += d;
    });
    npm.stderr.on('data', (d) => {
      out += d;
    });
    const npmExited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    const url = `http://127.0.0.1:${port}`;
    for (const deadline = Date.now() + 30_000; ; ) {
      try {
        if ((await fetch(`${url}/healthz`)).ok) break;
      } catch {}
      assert.ok(Date.now() < deadline && npm.exitCode === null, `the server did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // The server's own pid, from its JSON log lines (npm's are not JSON).
    const pids = new Set(
      out
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line).pid as number),
    );
    assert.equal(pids.size, 1, out);
    const [serverPid] = pids as Set<number>;
    assert.notEqual(serverPid, npm.pid);

    // A request in flight at the signal: its body arrives in two halves, the signal between them.
    const body = JSON.stringify({ name: 'in flight', imageName: 'ubuntu' });
    const answered = new Promise<number | string>((resolve) => {
      const req = request(`${url}/v1/templates`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (error) => resolve(error.message));
      req.write(body.slice(0, 10));
      setTimeout(() => {
        npm.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 700);
      }, 300);
    });
    assert.equal(await answered, 200, out);
    assert.equal(await npmExited, 0, out);
    assert.equal(alive(serverPid as number), false, 'the server is not left running');
    assert.match(out, /shutting down: draining in-flight requests/);
  } finally {
    await db.drop();
  }
});
