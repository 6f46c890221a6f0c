import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { abuse } from './abuse.ts';
import { seededIds, seedRevisions, seedTemplates } from './seed.ts';

// npm run bench [-- --quick | --smoke]: the service and its ceiling under one load generator, in one run,
// on this machine; ratios to the ceiling are what to compare across runs.

const mode = process.argv.includes('--smoke') ? 'smoke' : process.argv.includes('--quick') ? 'quick' : 'full';
const SETTINGS = {
  smoke: { duration: 1, warmup: 0.5, large: 2_000, largeTemplates: 4, tenants: 2, transfer: 2_000, dialects: ['sqlite'] },
  quick: { duration: 4, warmup: 1, large: 100_000, largeTemplates: 40, tenants: 10, transfer: 100_000, dialects: ['sqlite', 'postgres'] },
  full: {
    duration: 10,
    warmup: 2,
    large: 1_000_000,
    largeTemplates: 200,
    tenants: 10,
    transfer: 1_000_000,
    dialects: ['sqlite', 'postgres'],
  },
}[mode];
const CONNECTIONS = 50;
const SMALL = 1_000;
/** Distinct templates read by the wide GET: more than the default read cache holds (about 37,000 of the sample). */
const WIDE = 50_000;
const root = fileURLToPath(new URL('..', import.meta.url));
const postgresAdmin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Row {
  name: string;
  dialect: string;
  templates: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  ratio?: number;
}
const rows: Row[] = [];
const peakRss: Record<string, number> = {};
/** Peak RSS once four clients have read pages of large templates at once, by database. */
const pagesRss: Record<string, number> = {};

/** An export or import of a whole install: its wall time (process start to exit) and its own rate. */
interface Transfer {
  name: 'export' | 'import';
  dialect: string;
  templates: number;
  rows: number;
  seconds: number;
  templatesPerSecond: number;
  peakRssMb: number;
}
const transfers: Transfer[] = [];

// --- processes

interface Server {
  url: string;
  child: ChildProcess;
}

async function start(args: string[], env: Record<string, string>, readPort: boolean): Promise<Server> {
  const port = readPort ? 0 : await freePort();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', () => {});
  const deadline = Date.now() + 30_000;
  for (;;) {
    const announced = readPort ? /\{"port":(\d+)\}/.exec(out)?.[1] : String(port);
    if (announced) {
      try {
        const r = await fetch(`http://127.0.0.1:${announced}/healthz`);
        if (r.status < 500) return { url: `http://127.0.0.1:${announced}`, child };
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

async function stop(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
}

/** Peak resident memory of a process so far, in MB (Linux: VmHWM). */
function peakRssMb(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

const podplate = (args: string[], env: Record<string, string>) => {
  const r = spawnSync(process.execPath, [join(root, 'bin/podplate.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`podplate ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

// --- load

/** A request of the load; `key`, when given, is its own (the run's key otherwise). */
type Request = { method?: string; path: string; body?: string; key?: string };
let unique = 0;

/**
 * Runs the load: the requests are given up front and cycled (autocannon's cheapest mode, so the load generator
 * is not the bottleneck); "[<id>]" in a body becomes a number unique to the request.
 */
async function load(name: string, url: string, requests: Request[], key?: string, seconds = SETTINGS.duration) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const options = (duration: number) =>
    ({
      url,
      connections: CONNECTIONS,
      duration,
      headers,
      // Unique bodies need a callback per request; reads don't pay for it.
      requests: requests.map((r) => {
        const own = r.key ? { headers: { ...headers, authorization: `Bearer ${r.key}` } } : {};
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
  await autocannon(options(SETTINGS.warmup));
  const result = await autocannon(options(seconds));
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

// --- the scenarios

// The ceiling serves for the whole run and is measured again just before each database's GET by id: on a shared
// machine its figure drifts by tens of percent within minutes, so each figure's ratio is to the latest ceiling.
const ceilingServer = await start(['--import', 'tsx', 'bench/ceiling.ts'], {}, true);
let latestCeiling = 0;

async function measureCeiling(): Promise<void> {
  const r = await load('ceiling: bare Fastify, constant Template', ceilingServer.url, [{ path: '/v1/templates/c0nstant0templat' }]);
  rows.push({ ...r, dialect: '-', templates: 0, ratio: 1 });
  latestCeiling = r.rps;
}

async function database(dialect: string, suffix = 'service'): Promise<{ url: string; drop: () => Promise<void> }> {
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

async function service(dialect: string): Promise<void> {
  const db = await database(dialect);
  // Speed, not limits, is measured: the rate limit and the quotas are off. SECRETS_KEY: required on PostgreSQL; on
  // SQLite it spares a key file beside the throwaway database.
  const env = {
    DATABASE_URL: db.url,
    RATE_LIMIT_PER_MINUTE: '0',
    QUOTA_TEMPLATES_PER_ACCOUNT: '0',
    QUOTA_BYTES_PER_ACCOUNT: '0',
    QUOTA_ENDPOINTS_PER_ACCOUNT: '0',
    LOG_LEVEL: 'warn',
    DB_POOL_SIZE: '20',
    SECRETS_KEY: randomBytes(32).toString('base64'),
  };
  try {
    podplate(['migrate'], env);
    const key = podplate(['keys', 'create', '--user', 'bench'], env);
    const seeder = podplate(['keys', 'create', '--user', 'seeder'], env);
    // Writes come from several tenants, as a registry's do: one account's writes take turns on PostgreSQL (the
    // lock of its usage row, kept for its quotas), so one account alone is measured apart.
    const tenants = Array.from({ length: SETTINGS.tenants }, (_, i) => podplate(['keys', 'create', '--user', `tenant-${i}`], env));
    const server0 = await start(['bin/podplate.js', 'serve'], env, false);
    // The seeder's account id, through the API: a template of its own tells it.
    const probe = await fetch(`${server0.url}/v1/templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeder}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'probe', imageName: 'ubuntu' }),
    });
    const probeId = (await probe.json()).id as string;
    await stop(server0);
    const ownerId = await ownerOf(db.url, probeId);
    await seedTemplates(db.url, ownerId, 0, SMALL);

    let server = await start(['bin/podplate.js', 'serve'], env, false);
    const measure = async (total: number, scenarios: string[]) => {
      const own: { id: string; key: string }[] = [];
      if (scenarios.includes('update')) {
        for (let n = 0; n < 100; n++) {
          const tenant = tenants[n % tenants.length] as string;
          const r = await fetch(`${server.url}/v1/templates`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tenant}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `updated ${n}`, imageName: 'ubuntu' }),
          });
          own.push({ id: (await r.json()).id, key: tenant });
        }
      }
      const createBody = '{"name":"bench [<id>]","imageName":"runpod/pytorch:2.1.0","ports":["8888/http"]}';
      const all: Record<string, Request[]> = {
        get: seededIds(500, total).map((id) => ({ path: `/v1/templates/${id}?includePublicTemplates=true` })),
        // More templates than the default read cache holds (CACHE_MAX_MB): the peak RSS is read with it full.
        getWide: seededIds(WIDE, total).map((id) => ({ path: `/v1/templates/${id}?includePublicTemplates=true` })),
        list: [{ path: '/v1/templates?includePublicTemplates=true&limit=100' }],
        create: tenants.map((tenant) => ({ method: 'POST', path: '/v1/templates', body: createBody, key: tenant })),
        update: own.map(({ id, key }) => ({ method: 'POST', path: `/v1/templates/${id}/update`, body: '{"readme":"readme [<id>]"}', key })),
        createOne: [{ method: 'POST', path: '/v1/templates', body: createBody }],
      };
      const labels: Record<string, string> = {
        get: 'GET /v1/templates/{id}',
        getWide: `GET /v1/templates/{id} over ${Math.min(WIDE, total).toLocaleString('en')} ids`,
        list: 'GET /v1/templates (page of 100)',
        create: `POST /v1/templates (${tenants.length} tenants)`,
        update: `POST /v1/templates/{id}/update (${tenants.length} tenants)`,
        createOne: 'POST /v1/templates, one account',
      };
      for (const s of scenarios) {
        if (s === 'get' && total === SMALL) await measureCeiling();
        const r = await load(labels[s] as string, server.url, all[s] as Request[], key);
        rows.push({ ...r, dialect, templates: total, ratio: r.rps / latestCeiling });
      }
    };
    await measure(SMALL, ['get', 'list', 'create', 'update', 'createOne']);
    // Abuse: junk bodies, and four pages of large templates at once while another tenant reads.
    const hoarder = podplate(['keys', 'create', '--user', 'hoarder'], env);
    const other = `/v1/templates/${seededIds(1, SMALL)[0]}?includePublicTemplates=true`;
    const abused = await abuse(server.url, key, other, hoarder, SETTINGS.largeTemplates, SETTINGS.duration);
    rows.push({
      name: 'POST junk body (1 MiB, 100,000 unknown keys): 400',
      dialect,
      templates: SMALL,
      ...abused.junk,
      errors: abused.junk.unexpected,
    });
    rows.push({
      name: `GET /v1/templates?limit=1000 of ~1 MB templates, 4 at once`,
      dialect,
      templates: abused.pages.templates,
      rps: abused.pages.rps,
      p50: 0,
      p99: 0,
      errors: abused.pages.errors,
    });
    rows.push({
      name: 'GET /v1/templates/{id} of another tenant meanwhile',
      dialect,
      templates: abused.pages.templates,
      rps: 0,
      p50: abused.pages.otherP50,
      p99: abused.pages.otherP99,
      errors: abused.pages.otherErrors,
    });
    pagesRss[dialect] = peakRssMb(server.child.pid);
    await stop(server);

    await seedTemplates(db.url, ownerId, SMALL, SETTINGS.large);
    server = await start(['bin/podplate.js', 'serve'], env, false);
    await measure(SETTINGS.large, ['get', 'list', 'getWide']);
    peakRss[dialect] = peakRssMb(server.child.pid);
    await stop(server);
  } finally {
    await db.drop();
  }
}

/** Runs `podplate export` or `import` and reads its summary line: templates, rows, peak memory. */
function transfer(name: Transfer['name'], dialect: string, databaseUrl: string, file: string): void {
  const started = performance.now();
  const args = name === 'export' ? ['export', '--output', file] : ['import', '--input', file];
  const r = spawnSync(process.execPath, [join(root, 'bin/podplate.js'), ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  const seconds = (performance.now() - started) / 1000;
  if (r.status !== 0) throw new Error(`podplate ${args.join(' ')}: ${r.stderr}`);
  const [, templates, all, own, rss] =
    /([\d,]+) templates \(([\d,]+) rows in all\) in ([\d.]+) s.*peak memory (\d+) MB/.exec(r.stderr) ?? [];
  const n = Number(templates?.replaceAll(',', ''));
  // The rate is the command's own (from opening the database to the last row); `seconds` also counts starting Node.
  transfers.push({
    name,
    dialect,
    templates: n,
    rows: Number(all?.replaceAll(',', '')),
    seconds,
    templatesPerSecond: n / Number(own),
    peakRssMb: Number(rss),
  });
}

/**
 * Moves an install of `SETTINGS.transfer` templates (each with its first revision) around: exported from SQLite,
 * imported into PostgreSQL, exported from there and imported into SQLite again (SQLite to SQLite in smoke mode).
 */
async function moves(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'podplate-transfer-'));
  const made: { drop: () => Promise<void> }[] = [];
  try {
    const fresh = async (dialect: string) => {
      const db = await database(dialect, `transfer_${made.length}`);
      made.push(db);
      return db.url;
    };
    const source = await fresh('sqlite');
    podplate(['keys', 'create', '--user', 'mover'], { DATABASE_URL: source });
    const { default: SQLite } = await import('better-sqlite3');
    const sqlite = new SQLite(source.slice('sqlite:'.length), { readonly: true });
    const { owner, key } = sqlite.prepare('select account_id as owner, id as key from api_keys').get() as { owner: string; key: string };
    sqlite.close();
    await seedTemplates(source, owner, 0, SETTINGS.transfer);
    await seedRevisions(source, key, 0, SETTINGS.transfer);

    const first = join(dir, 'first.ndjson');
    transfer('export', 'sqlite', source, first);
    const through = SETTINGS.dialects.includes('postgres') ? 'postgres' : 'sqlite';
    const middle = await fresh(through);
    transfer('import', through, middle, first);
    rmSync(first);
    if (through === 'postgres') {
      const second = join(dir, 'second.ndjson');
      transfer('export', 'postgres', middle, second);
      transfer('import', 'sqlite', await fresh('sqlite'), second);
    }
  } finally {
    for (const db of made) await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ownerOf(databaseUrl: string, templateId: string): Promise<string> {
  if (databaseUrl.startsWith('sqlite:')) {
    const { default: SQLite } = await import('better-sqlite3');
    const db = new SQLite(databaseUrl.slice('sqlite:'.length), { readonly: true });
    const row = db.prepare('select owner_id from templates where id = ?').get(templateId) as { owner_id: string };
    db.close();
    return row.owner_id;
  }
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  const r = await c.query('select owner_id from templates where id = $1', [templateId]);
  await c.end();
  return r.rows[0].owner_id;
}

// --- the report

const find = (name: string, dialect: string, templates = SMALL) =>
  rows.find((r) => r.name.startsWith(name) && r.dialect === dialect && r.templates === templates);

function targets() {
  const out: { target: string; value: string; met: boolean }[] = [];
  const add = (target: string, value: number | undefined, met: (v: number) => boolean, unit = '') => {
    if (value !== undefined) out.push({ target, value: `${value.toFixed(unit === '' ? 2 : 0)}${unit}`, met: met(value) });
  };
  add('GET by id, SQLite >= 0.7 x ceiling', find('GET /v1/templates/{id}', 'sqlite')?.ratio, (v) => v >= 0.7);
  add('GET by id, PostgreSQL >= 0.7 x ceiling', find('GET /v1/templates/{id}', 'postgres')?.ratio, (v) => v >= 0.7);
  for (const d of ['sqlite', 'postgres'])
    add(`GET by id p99 <= 20 ms at ${CONNECTIONS} connections (${d})`, find('GET /v1/templates/{id}', d)?.p99, (v) => v <= 20, ' ms');
  add('create, SQLite >= 3,000/s', find('POST /v1/templates (', 'sqlite')?.rps, (v) => v >= 3000, '/s');
  add('update, SQLite >= 3,000/s', find('POST /v1/templates/{id}/update', 'sqlite')?.rps, (v) => v >= 3000, '/s');
  for (const d of SETTINGS.dialects) {
    for (const name of ['GET /v1/templates/{id}', 'GET /v1/templates (page']) {
      const small = find(name, d)?.rps;
      const large = find(name, d, SETTINGS.large)?.rps;
      if (small && large)
        add(
          `${name.replace(' (page', ' page')} at ${SETTINGS.large.toLocaleString('en')} keeps >= 85 % (${d})`,
          large / small,
          (v) => v >= 0.85,
        );
    }
    add(`peak RSS <= 300 MB (${d})`, peakRss[d], (v) => v <= 300, ' MB');
    add(`junk body refused: p99 <= 25 ms (${d})`, find('POST junk body', d)?.p99, (v) => v <= 25, ' ms');
    add(
      `4 pages of large templates: another tenant's p99 <= 1,000 ms (${d})`,
      find('GET /v1/templates/{id} of another', d, SETTINGS.largeTemplates)?.p99,
      (v) => v <= 1000,
      ' ms',
    );
    add(`4 pages of large templates: peak RSS <= 600 MB (${d})`, pagesRss[d], (v) => v <= 600, ' MB');
  }
  for (const t of transfers) {
    const floor = t.name === 'export' ? 20_000 : 10_000;
    add(`${t.name} ${t.dialect} >= ${floor.toLocaleString('en')} templates/s`, t.templatesPerSecond, (v) => v >= floor, '/s');
    add(`${t.name} ${t.dialect}: peak RSS <= 300 MB (bounded, whatever the install's size)`, t.peakRssMb, (v) => v <= 300, ' MB');
  }
  return out;
}

function table(): string {
  const lines = [
    '| scenario | database | templates | requests/s | p50 ms | p99 ms | errors | × ceiling |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.dialect} | ${r.templates.toLocaleString('en')} | ${Math.round(r.rps).toLocaleString('en')} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.ratio?.toFixed(2) ?? '-'} |`,
    ),
    '',
    '| move | database | templates | rows | seconds | templates/s | peak RSS MB |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...transfers.map(
      (t) =>
        `| ${t.name} | ${t.dialect} | ${t.templates.toLocaleString('en')} | ${t.rows.toLocaleString('en')} | ${t.seconds.toFixed(1)} | ${Math.round(t.templatesPerSecond).toLocaleString('en')} | ${t.peakRssMb} |`,
    ),
    '',
    '| target | measured | |',
    '|---|---:|---|',
    ...targets().map((t) => `| ${t.target} | ${t.value} | ${t.met ? 'met' : 'NOT MET'} |`),
  ];
  return lines.join('\n');
}

try {
  for (const dialect of SETTINGS.dialects) await service(dialect);
  await moves();
} finally {
  await stop(ceilingServer);
}
const machine = `${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const report = {
  mode,
  when: new Date().toISOString(),
  machine,
  connections: CONNECTIONS,
  durationSeconds: SETTINGS.duration,
  rows,
  peakRssMb: peakRss,
  largePagesPeakRssMb: pagesRss,
  transfers,
  targets: targets(),
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
const file = join(root, `bench/results/${mode}-${report.when.replace(/[:.]/g, '-')}.json`);
if (mode !== 'smoke') writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
if (process.env.BENCH_OUTPUT) writeFileSync(process.env.BENCH_OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`\nPodplate benchmark (${mode}), ${machine}, ${CONNECTIONS} connections, ${SETTINGS.duration} s each\n\n${table()}\n`);
if (mode !== 'smoke') process.stdout.write(`\nWritten to ${file}\n`);
