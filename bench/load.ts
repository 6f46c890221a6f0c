import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { CONNECTIONS, SETTINGS } from './settings.ts';

// The load: autocannon over requests given up front, or one request after another, each timed.

/**
 * A request of the load; `key`, when given, is its own (the run's key otherwise). With `paths`, each request sent
 * takes the next of them, whichever connection sends it: autocannon cycles its list per connection, from the start,
 * so 50 connections over a list of 50,000 read the same first few thousand (2,804 distinct ids in 6 s, measured).
 */
export type Request = {
  method?: string;
  path: string;
  body?: string;
  key?: string;
  paths?: string[];
  headers?: Record<string, string>;
};

/** A scenario's figures: requests/s, latencies in ms, and the requests that failed (5xx among them). */
export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  serverErrors: number;
  /** CPU time the server process spent per request answered (user and system), when its pid was given. */
  cpuUsPerRequest?: number;
  /** Bytes read per request answered (headers and body, as sent: compressed or not). */
  bytesPerRequest?: number;
}

/** Clock ticks a second, the unit of /proc/<pid>/stat's CPU times. */
const TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** CPU time a process has used so far (user and system), in µs (Linux: fields 14 and 15 of /proc/<pid>/stat). */
export function cpuMicroseconds(pid: number): number {
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS;
}

let unique = 0;

/**
 * Runs the load: the requests are given up front and cycled (autocannon's cheapest mode, so the load generator
 * is not the bottleneck); "[<id>]" in a body becomes a number unique to the request.
 */
export async function load(
  name: string,
  url: string,
  requests: Request[],
  key?: string,
  options: { seconds?: number; connections?: number; timeout?: number; serverPid?: number } = {},
): Promise<Figures> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const settings = (duration: number) =>
    ({
      url,
      connections: options.connections ?? CONNECTIONS,
      duration,
      ...(options.timeout ? { timeout: options.timeout } : {}),
      headers,
      // Unique bodies need a callback per request; reads don't pay for it.
      requests: requests.map((r) => {
        const own =
          r.key || r.headers ? { headers: { ...headers, ...(r.key ? { authorization: `Bearer ${r.key}` } : {}), ...r.headers } } : {};
        if (r.paths) {
          const paths = r.paths;
          let next = 0;
          return {
            method: r.method ?? 'GET',
            path: r.path,
            ...own,
            setupRequest: (req: autocannon.Request) => ({ ...req, path: paths[next++ % paths.length] }),
          };
        }
        return r.body?.includes('[<id>]')
          ? {
              method: r.method,
              path: r.path,
              ...own,
              setupRequest: (req: autocannon.Request) => ({ ...req, body: r.body?.replace('[<id>]', String(unique++)) }),
            }
          : { method: r.method ?? 'GET', path: r.path, body: r.body, ...own };
      }),
    }) as autocannon.Options;
  await autocannon(settings(SETTINGS.warmup));
  const pid = options.serverPid;
  const cpuBefore = pid === undefined ? 0 : cpuMicroseconds(pid);
  const result = await autocannon(settings(options.seconds ?? SETTINGS.duration));
  const measured = figures(name, result);
  const answered = result.requests.total;
  if (pid === undefined || answered === 0) return measured;
  return {
    ...measured,
    cpuUsPerRequest: (cpuMicroseconds(pid) - cpuBefore) / answered,
    bytesPerRequest: result.throughput.total / answered,
  };
}

/** A scenario's figures from autocannon's result. */
export function figures(name: string, result: autocannon.Result): Figures {
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    serverErrors: result['5xx'],
  };
}

/** The value at quantile `q` of ascending `sorted` values. */
export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** One GET with `key`, timed from sending to the last byte of the body: its time in ms, status, body and headers. */
export async function timedGet(url: string, key: string) {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  const body = await response.text();
  return { ms: performance.now() - started, status: response.status, body, headers: response.headers };
}
