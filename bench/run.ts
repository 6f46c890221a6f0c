import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { abuse } from './abuse.ts';
import { fairness } from './fairness.ts';
import { load, type Request } from './load.ts';
import { outboxDelivery } from './outbox.ts';
import { database, peakRssMb, podplate, resetPeakRss, root, start, stop } from './processes.ts';
import { deliveries, fairnessFigures, pagesRss, peakRss, rows, seedSeconds, type Transfer, table, targets, transfers } from './report.ts';
import { searchScenarios } from './search.ts';
import { seedCatalogue, seedCatalogueRevisions, seededIds } from './seed.ts';
import { CONNECTIONS, mode, SETTINGS, SMALL, WIDE } from './settings.ts';

// npm run bench [-- --quick | --smoke]: the service and its ceiling under one load generator, in one run,
// on this machine; ratios to the ceiling are what to compare across runs.

// --- the scenarios

// The ceiling serves for the whole run and is measured again just before each database's GET by id: on a shared
// machine its figure drifts by tens of percent within minutes, so each figure's ratio is to the latest ceiling.
const ceilingServer = await start(['bench/ceiling.ts'], {}, true);
let latestCeiling = 0;

let latestCeilingCpu = 0;

async function measureCeiling(): Promise<void> {
  const r = await load('ceiling: bare Fastify, constant Template', ceilingServer, [{ path: '/v1/templates/c0nstant0templat' }]);
  rows.push({ ...r, dialect: '-', templates: 0, ratio: 1, cpuRatio: 1 });
  latestCeiling = r.rps;
  latestCeilingCpu = r.cpuUs ?? 0;
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
    IMAGE_CHECK: 'off',
    DB_POOL_SIZE: '20',
    SECRETS_KEY: randomBytes(32).toString('base64'),
  };
  try {
    podplate(['migrate'], env);
    const key = podplate(['keys', 'create', '--user', 'bench'], env);
    // A user with no templates of its own searches: what it finds is the catalogue's.
    const searcher = podplate(['keys', 'create', '--user', 'searcher'], env);
    // Writes come from several tenants, as a registry's do: one account's writes take turns on PostgreSQL (the
    // lock of its usage row, kept for its quotas), so one account alone is measured apart.
    const tenants = Array.from({ length: SETTINGS.tenants }, (_, i) => podplate(['keys', 'create', '--user', `tenant-${i}`], env));
    // The catalogue (catalogue.ts) of the large size, its first SMALL rows first; the rest after the small run.
    seedSeconds[dialect] = await seedCatalogue(db.url, 0, SMALL, SETTINGS.large);

    let server = await start(['bin/podplate.js', 'serve'], env, false);
    let fresh = true;
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
      const wide = seededIds(WIDE, total, SETTINGS.large);
      const all: Record<string, Request[]> = {
        get: seededIds(500, total, SETTINGS.large).map((id) => ({ path: `/v1/templates/${id}?includePublicTemplates=true` })),
        getDefaults: seededIds(500, total, SETTINGS.large).map((id) => ({ path: `/v1/templates/${id}?includePublicTemplates=true` })),
        // More templates than the default read cache holds (CACHE_MAX_MB): the peak RSS is read with it full.
        getWide: [{ path: '/v1/templates', paths: wide.map((id) => `/v1/templates/${id}?includePublicTemplates=true`) }],
        list: [{ path: '/v1/templates?includePublicTemplates=true&limit=100' }],
        list20: [{ path: '/v1/templates?includePublicTemplates=true&limit=20' }],
        // The same page compressed: what compression costs the server in CPU, and saves on the wire, per request.
        listGzip: [{ path: '/v1/templates?includePublicTemplates=true&limit=100', headers: { 'accept-encoding': 'gzip' } }],
        listBr: [{ path: '/v1/templates?includePublicTemplates=true&limit=100', headers: { 'accept-encoding': 'br' } }],
        create: tenants.map((tenant) => ({ method: 'POST', path: '/v1/templates', body: createBody, key: tenant })),
        update: own.map(({ id, key }) => ({ method: 'POST', path: `/v1/templates/${id}/update`, body: '{"readme":"readme [<id>]"}', key })),
        createOne: [{ method: 'POST', path: '/v1/templates', body: createBody }],
      };
      const labels: Record<string, string> = {
        get: 'GET /v1/templates/{id}',
        getDefaults: 'GET /v1/templates/{id}, LOG_LEVEL=info and the rate limit on',
        getWide: `GET /v1/templates/{id} over ${wide.length.toLocaleString('en')} ids`,
        list: 'GET /v1/templates (page of 100)',
        list20: 'GET /v1/templates (page of 20)',
        listGzip: 'compressed: GET /v1/templates (page of 100), gzip',
        listBr: 'compressed: GET /v1/templates (page of 100), br',
        create: `POST /v1/templates (${tenants.length} tenants)`,
        update: `POST /v1/templates/{id}/update (${tenants.length} tenants)`,
        createOne: 'POST /v1/templates, one account',
      };
      for (const s of scenarios) {
        if (s === 'get' && total === SMALL) await measureCeiling();
        // A server's first seconds stall its event loop while V8 compiles the paths (up to 27 ms, against 7 ms
        // after): not the steady state the targets are about, so its first scenario warms up longer.
        const r = await load(labels[s] as string, server, all[s] as Request[], key, fresh ? { warmup: SETTINGS.settle } : {});
        fresh = false;
        rows.push({
          ...r,
          dialect,
          templates: total,
          ratio: r.rps / latestCeiling,
          cpuRatio: r.cpuUs ? latestCeilingCpu / r.cpuUs : undefined,
        });
      }
    };
    await measure(SMALL, ['get', 'list', 'list20', 'listGzip', 'listBr', 'create', 'update', 'createOne']);
    // Abuse: junk bodies, and four pages of large templates at once while another tenant reads.
    const hoarder = podplate(['keys', 'create', '--user', 'hoarder'], env);
    const other = `/v1/templates/${seededIds(1, SMALL, SETTINGS.large)[0]}?includePublicTemplates=true`;
    // The pages' peak memory is their own: the junk bodies and the 1 MB creates before them are not counted in it.
    const abused = await abuse(server.url, key, other, hoarder, SETTINGS.largeTemplates, SETTINGS.duration, () =>
      resetPeakRss(server.child.pid),
    );
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
    // What the defaults cost a GET: a log line for each request (LOG_LEVEL=info), and the rate limit (on, the key
    // allowed the load).
    server = await start(['bin/podplate.js', 'serve'], { ...env, LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '10000000' }, false);
    fresh = true;
    await measure(SMALL, ['getDefaults']);
    await stop(server);

    seedSeconds[dialect] = (seedSeconds[dialect] ?? 0) + (await seedCatalogue(db.url, SMALL, SETTINGS.large, SETTINGS.large));
    server = await start(['bin/podplate.js', 'serve'], env, false);
    fresh = true;
    await measure(SETTINGS.large, ['get', 'list', 'getWide']);
    for (const r of await searchScenarios(server, searcher, key, SETTINGS.large)) rows.push({ ...r, dialect, templates: SETTINGS.large });
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
  const [, templates, all, rate, rss] =
    /([\d,]+) templates \(([\d,]+) rows in all\) in [\d.]+ s \(([\d,]+) templates\/s\).*peak memory (\d+) MB/.exec(r.stderr) ?? [];
  const number = (text: string | undefined) => Number(text?.replaceAll(',', ''));
  // The rate is the command's own, from its exact time (opening the database to the last row; the seconds it prints
  // are rounded to a tenth, "0.0 s" for a small install); `seconds` also counts starting Node.
  transfers.push({
    name,
    dialect,
    templates: number(templates),
    rows: number(all),
    seconds,
    templatesPerSecond: number(rate),
    peakRssMb: Number(rss),
  });
}

/**
 * Moves an install of `SETTINGS.transfer` templates of the catalogue (each with its first revision) around: exported from SQLite,
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
    const { key } = sqlite.prepare('select id as key from api_keys').get() as { key: string };
    sqlite.close();
    // The catalogue of the scale run, its many owners included.
    await seedCatalogue(source, 0, SETTINGS.transfer, SETTINGS.transfer);
    await seedCatalogueRevisions(source, key, 0, SETTINGS.transfer, SETTINGS.transfer);

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

// --- the run, and its report

try {
  // The moves first, before seeding grows this process (the commands report their own peak memory, VmHWM, since).
  await moves();
  for (const dialect of SETTINGS.dialects) {
    await service(dialect);
    deliveries.push(...(await outboxDelivery(dialect)));
    fairnessFigures.push(await fairness(dialect, SETTINGS.duration));
  }
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
  catalogueSeedSeconds: seedSeconds,
  deliveries,
  fairness: fairnessFigures,
  transfers,
  targets: targets(),
};
mkdirSync(join(root, 'bench/results'), { recursive: true });
const file = join(root, `bench/results/${mode}-${report.when.replace(/[:.]/g, '-')}.json`);
if (mode !== 'smoke') writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
if (process.env.BENCH_OUTPUT) writeFileSync(process.env.BENCH_OUTPUT, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`\nPodplate benchmark (${mode}), ${machine}, ${CONNECTIONS} connections, ${SETTINGS.duration} s each\n\n${table()}\n`);
if (mode !== 'smoke') process.stdout.write(`\nWritten to ${file}\n`);
