import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/podplate.js', import.meta.url));

/** Runs the podplate command to completion; `input` is piped to its stdin. */
export function podplate(args: string[], env: Record<string, string>, input = '') {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, input, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Where the first start writes the first platform key (BOOTSTRAP_KEY_FILE). */
  keyFile: string;
  /** The first platform key the start made, read from its file; undefined when it made none. */
  firstKey(): string | undefined;
}

/** The SECRETS_KEY servers on PostgreSQL get from `startServer` when the test gives none (every one the same). */
export const TEST_SECRETS_KEY = 'dGVzdC1vbmx5IHNlY3JldHMga2V5LCAzMiBieXRlcyE=';

/**
 * Starts `podplate serve` and waits until it answers /healthz. On PostgreSQL, where SECRETS_KEY is required, the server
 * gets TEST_SECRETS_KEY unless `env` names one (`SECRETS_KEY: ''` for none). Image checks are off unless `env` turns
 * them on (IMAGE_CHECK): no test server reaches a registry the test did not start. The first platform key, if the start
 * makes one, goes to a file of the test's own (BOOTSTRAP_KEY_FILE, unless `env` names one): `firstKey()` reads it.
 */
export async function startServer(env: Record<string, string>, options: { cwd?: string } = {}): Promise<ServerProcess> {
  const port = await freePort();
  const keys = /^postgres/.test(env.DATABASE_URL ?? '') && !('SECRETS_KEY' in env) ? { SECRETS_KEY: TEST_SECRETS_KEY } : {};
  const keyFile = env.BOOTSTRAP_KEY_FILE ?? join(mkdtempSync(join(tmpdir(), 'podplate-first-key-')), 'first-platform-key');
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), IMAGE_CHECK: 'off', ...keys, BOOTSTRAP_KEY_FILE: keyFile, ...env },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${err}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    keyFile,
    firstKey: () => (existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : undefined),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** One request to a server process with `key`; the body as JSON both ways. */
export async function call(server: ServerProcess, key: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text ? JSON.parse(text) : undefined };
}
