import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { GENERATOR_CORE } from './processes.ts';
import { CONNECTIONS, SETTINGS } from './settings.ts';

// The load, and what it cost the server. wrk (C, one thread) runs in a process of its own, pinned to a core the
// server is not pinned to, so that the generator neither shares the server's core nor runs in the bench's process;
// the figure of merit is the server process's own CPU time per request (/proc/<pid>/stat: utime + stime over the
// requests answered), next to requests per second. Searches timed one at a time use autocannon (figures()).

/**
 * A request of the load; `key`, when given, is its own (the run's key otherwise). With `paths`, each request sent
 * takes the next of them, whichever connection sends it; "[<id>]" in a body becomes a number unique to the request.
 */
export type Request = { method?: string; path: string; body?: string; key?: string; paths?: string[]; headers?: Record<string, string> };

/** A scenario's figures: requests/s, latencies in ms, the requests that failed (5xx among them), the server's CPU. */
export interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  serverErrors: number;
  /** The server's CPU time per request answered, in µs (user and system). */
  cpuUs?: number;
  /** Bytes read per request answered (headers and body, as sent: compressed or not). */
  bytesPerRequest?: number;
}

/** A process whose CPU time is read: the server under load. */
export interface Measured {
  url: string;
  pid: number;
}

const TICKS_PER_SECOND = Number(process.env.CLK_TCK ?? 100);

/** The CPU time `pid` has used, in seconds (user and system), from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are the 14th and 15th fields of the line; [1] starts at the 3rd.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** A Lua string literal (the texts are printable: JSON's escapes of quotes and backslashes are Lua's). */
const lua = (text: string) => JSON.stringify(text);

const PART = 5_000;

/** The wrk script: the requests in turn across connections, bodies numbered, statuses counted and reported on done. */
function script(requests: Request[], key: string | undefined): string {
  const entries = requests.flatMap((r) => (r.paths ?? [r.path]).map((path) => ({ ...r, path })));
  const entry = (r: (typeof entries)[number]) => {
    const headers = [`["content-type"]="application/json"`, ...Object.entries(r.headers ?? {}).map(([k, v]) => `[${lua(k)}]=${lua(v)}`)];
    const k = r.key ?? key;
    if (k) headers.push(`["authorization"]=${lua(`Bearer ${k}`)}`);
    return `{m=${lua(r.method ?? 'GET')},p=${lua(r.path)},h={${headers.join(',')}},b=${r.body ? lua(r.body) : 'nil'}}`;
  };
  // In parts of PART entries, each a function of its own: LuaJIT keeps at most 65,536 constants a function, and a
  // script it can't load makes wrk request `/` instead, saying nothing (50,000 GET paths did).
  const parts: string[] = [];
  for (let i = 0; i < entries.length; i += PART) {
    parts.push(
      `add((function() return {${entries
        .slice(i, i + PART)
        .map(entry)
        .join(',\n')}} end)())`,
    );
  }
  return `local requests = {}
local function add(list) for _, r in ipairs(list) do requests[#requests + 1] = r end end
${parts.join('\n')}
local n, unique = 0, 0
local statuses = {}
request = function()
  n = n + 1
  local r = requests[(n - 1) % #requests + 1]
  local body = r.b
  if body then unique = unique + 1; body = body:gsub("%[<id>%]", tostring(unique)) end
  return wrk.format(r.m, r.p, r.h, body)
end
response = function(status)
  statuses[status] = (statuses[status] or 0) + 1
end
done = function(summary, latency)
  local errors, server = 0, 0
  for status, count in pairs(statuses) do
    if status >= 300 then errors = errors + count end
    if status >= 500 then server = server + count end
  end
  errors = errors + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format('{"requests":%d,"seconds":%f,"bytes":%d,"p50":%f,"p99":%f,"errors":%d,"serverErrors":%d}\\n',
    summary.requests, summary.duration / 1e6, summary.bytes, latency:percentile(50) / 1000, latency:percentile(99) / 1000, errors, server))
end
`;
}

/** Runs wrk for `seconds` on its own core; its summary. */
async function wrk(url: string, file: string, seconds: number, connections: number, timeout: number) {
  const args = [
    '-t1',
    `-c${connections}`,
    `-d${Math.max(1, Math.round(seconds))}s`,
    `--timeout`,
    `${Math.max(1, Math.ceil(timeout / 1000))}s`,
    '-s',
    file,
    url,
  ];
  const child = spawn('taskset', ['-c', String(GENERATOR_CORE), 'wrk', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  // 'close', not 'exit': the summary line is wrk's last output, and 'exit' may come before it is read.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const line = out.split('\n').find((l) => l.startsWith('{"requests"'));
  if (code !== 0 || !line) throw new Error(`wrk ${args.join(' ')} failed (${code}): ${out}${err}`);
  return JSON.parse(line) as {
    requests: number;
    seconds: number;
    bytes: number;
    p50: number;
    p99: number;
    errors: number;
    serverErrors: number;
  };
}

/** Runs the load on `server` after a warm-up: its rate, latencies, failures, and the server's CPU per request. */
export async function load(
  name: string,
  server: Measured,
  requests: Request[],
  key?: string,
  options: { seconds?: number; connections?: number; timeout?: number; warmup?: number } = {},
): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'podplate-load-'));
  try {
    const file = join(dir, 'load.lua');
    writeFileSync(file, script(requests, key));
    const connections = options.connections ?? CONNECTIONS;
    const timeout = options.timeout ?? 10_000;
    const url = new URL(requests[0]?.path ?? '/', server.url).origin;
    await wrk(url, file, options.warmup ?? SETTINGS.warmup, connections, timeout);
    const cpuBefore = cpuSeconds(server.pid);
    const r = await wrk(url, file, options.seconds ?? SETTINGS.duration, connections, timeout);
    const cpu = cpuSeconds(server.pid) - cpuBefore;
    return {
      name,
      rps: r.requests / r.seconds,
      p50: Math.round(r.p50 * 10) / 10,
      p99: Math.round(r.p99 * 10) / 10,
      errors: r.errors,
      serverErrors: r.serverErrors,
      cpuUs: r.requests > 0 ? (cpu * 1e6) / r.requests : 0,
      bytesPerRequest: r.requests > 0 ? r.bytes / r.requests : 0,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A scenario's figures from autocannon's result (the searches' one client, timed by autocannon). */
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
