import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

// The processes and databases a run starts, and ends.

export const root = fileURLToPath(new URL('..', import.meta.url));
const postgresAdmin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The servers run on one core and the load generator on another (taskset), so that neither takes the other's CPU
 * and the server's own CPU time per request is what it costs. (PostgreSQL's processes are not pinned.)
 */
export const SERVER_CORE = 0;
export const GENERATOR_CORE = cpus().length > 1 ? 1 : 0;

export interface Server {
  url: string;
  child: ChildProcess;
  /** The server process's pid (taskset runs it in its own place). */
  pid: number;
}

/** Starts a Node program of this repository (`args`, as `node` takes them) on the server's core, with the bench's Node. */
export async function start(args: string[], env: Record<string, string>, readPort: boolean): Promise<Server> {
  const port = readPort ? 0 : await freePort();
  const child = spawn('taskset', ['-c', String(SERVER_CORE), process.execPath, ...args], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // Only the start is read (the port announced): a server logging each request is not kept in memory here.
  child.stdout?.on('data', (d) => {
    if (out.length < 65_536) out += d;
  });
  child.stderr?.on('data', () => {});
  const deadline = Date.now() + 30_000;
  for (;;) {
    const announced = readPort ? /\{"port":(\d+)\}/.exec(out)?.[1] : String(port);
    if (announced) {
      try {
        const r = await fetch(`http://127.0.0.1:${announced}/healthz`);
        if (r.status < 500) return { url: `http://127.0.0.1:${announced}`, child, pid: child.pid as number };
      } catch {}
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`could not start ${args.join(' ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function stop(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
}

/** Starts a process's peak resident memory again from what it holds now (Linux: `5` to clear_refs resets VmHWM). */
export function resetPeakRss(pid: number | undefined): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Peak resident memory of a process so far, in MB (Linux: VmHWM). */
export function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

export const podplate = (args: string[], env: Record<string, string>) => {
  const r = spawnSync(process.execPath, [join(root, 'bin/podplate.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`podplate ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

/** A throwaway database: a file in a temporary directory, or a PostgreSQL database of its own. */
export async function database(dialect: string, suffix = 'service'): Promise<{ url: string; drop: () => Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'podplate-bench-'));
    return { url: `sqlite:${join(dir, 'bench.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `podplate_bench_${process.pid}_${suffix}`;
  const admin = new pg.Client({ connectionString: postgresAdmin });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(postgresAdmin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: postgresAdmin });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
