import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Registry as MetricSet } from 'prom-client';
import { DomainError } from '../../domain/errors.ts';
import type { OutboxBacklog } from '../../domain/outbox.ts';
import type { DatabaseFigures, Podplate } from '../../usecases/podplate.ts';
import { NoQuery } from '../schemas.ts';
import { problemResponses } from './problem.ts';

// /metrics with prom-client: requests by route template (never the raw URL) and status, requests in flight, the
// process and Node's own figures, the database's, and the webhook outbox. Every label takes a bounded set of values.

/** The process's figures are the process's, not one app's: collected once, shared by every app it builds. */
let processMetrics: MetricSet | undefined;
function processMetricSet(): MetricSet {
  if (!processMetrics) {
    processMetrics = new MetricSet();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Requests no route matched (404s of any URL) share one route label. */
const UNMATCHED = '(unmatched)';

/** One series of a histogram: its labels, how many observations were at most each bound, their count and sum. */
interface Series {
  labels: Record<string, string>;
  bounds: readonly number[];
  atMost: number[];
  count: number;
  sum: number;
}

/** Prometheus's histogram shape for counts kept elsewhere (the store's, the requests'), read when scraped. */
function histogramOf(name: string, help: string, read: () => Series[]) {
  return {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: () => ({
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      values: read().flatMap((h) => [
        ...h.bounds.map((bound, i) => ({ metricName: `${name}_bucket`, labels: { ...h.labels, le: bound }, value: h.atMost[i] ?? 0 })),
        { metricName: `${name}_bucket`, labels: { ...h.labels, le: '+Inf' }, value: h.count },
        { metricName: `${name}_sum`, labels: h.labels, value: h.sum },
        { metricName: `${name}_count`, labels: h.labels, value: h.count },
      ]),
    }),
  };
}

/**
 * Request durations by method, route template and status, counted here: a map lookup, a bucket found and two
 * additions a request, made into Prometheus's cumulative buckets only when scraped. prom-client's Histogram checks
 * and hashes the labels at every observation, which cost a cached GET about a tenth of its CPU (docs/performance.md).
 */
export class RequestDurations {
  readonly bounds: readonly number[];
  private readonly series = new Map<string, { labels: Record<string, string>; inBucket: number[]; count: number; sum: number }>();

  constructor(bounds: readonly number[]) {
    this.bounds = bounds;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route} ${status}`;
    let series = this.series.get(key);
    if (!series) {
      series = { labels: { method, route, status_code: String(status) }, inBucket: this.bounds.map(() => 0), count: 0, sum: 0 };
      this.series.set(key, series);
    }
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > (this.bounds[bucket] as number)) bucket++;
    if (bucket < this.bounds.length) series.inBucket[bucket] = (series.inBucket[bucket] as number) + 1;
    series.count++;
    series.sum += seconds;
  }

  /** Each label set's series, its buckets cumulative (at most each bound), as Prometheus reads them. */
  read(): Series[] {
    return [...this.series.values()].map(({ labels, inBucket, count, sum }) => {
      let running = 0;
      return { labels, bounds: this.bounds, atMost: inBucket.map((n) => (running += n)), count, sum };
    });
  }
}

/** Figures of the database, read from the store when scraped. */
function databaseMetrics(metrics: MetricSet, figures: () => DatabaseFigures): () => void {
  const first = figures();
  if (first.groupCommits) {
    metrics.registerMetric(
      histogramOf('podplate_db_group_commit_size', 'SQLite: transactions committed together by one group commit (one fsync).', () => {
        const sizes = figures().groupCommits;
        return sizes ? [{ labels: {}, bounds: sizes.bounds, atMost: sizes.atMost, count: sizes.commits, sum: sizes.transactions }] : [];
      }) as never,
    );
  }
  if (!first.pool) return () => {};
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [metrics] });
  const counter = (name: string, help: string) => new Counter({ name, help, registers: [metrics] });
  const max = gauge('podplate_db_pool_max', 'PostgreSQL: the most connections this process holds (DB_POOL_SIZE).');
  const open = gauge('podplate_db_pool_connections', 'PostgreSQL: connections open, idle or in use.');
  const idle = gauge('podplate_db_pool_idle_connections', 'PostgreSQL: connections open and idle.');
  const waiting = gauge('podplate_db_pool_waiting', 'PostgreSQL: callers waiting for a connection right now.');
  const acquired = counter('podplate_db_pool_acquisitions_total', 'PostgreSQL: connections taken from the pool.');
  const waited = counter('podplate_db_pool_waits_total', 'PostgreSQL: connections taken that had to wait, none being idle.');
  const waitSeconds = counter('podplate_db_pool_wait_seconds_total', 'PostgreSQL: seconds spent waiting for a connection.');
  const setCounter = (c: Counter, value: number) => {
    c.reset();
    c.inc(value);
  };
  return () => {
    const pool = figures().pool;
    if (!pool) return;
    max.set(pool.max);
    open.set(pool.open);
    idle.set(pool.idle);
    waiting.set(pool.waiting);
    setCounter(acquired, pool.acquired);
    setCounter(waited, pool.waited);
    setCounter(waitSeconds, pool.waitSeconds);
  };
}

/**
 * The read cache's figures (the store's plain counts), read when scraped: hits, misses, evictions and size of each
 * cache (`cache` is `templates` or `keys`), changes heard, flushes, and whether the cache is trusted.
 */
function cacheMetrics(metrics: MetricSet, figures: () => DatabaseFigures): () => void {
  const labelled = (name: string, help: string) => new Counter({ name, help, labelNames: ['cache'], registers: [metrics] });
  const hits = labelled('podplate_cache_hits_total', 'Lookups the read cache answered.');
  const misses = labelled('podplate_cache_misses_total', 'Lookups the read cache did not hold, read from the database (and kept).');
  const evictions = labelled('podplate_cache_evictions_total', 'Entries pushed out of the read cache by its size bound.');
  const entries = new Gauge({
    name: 'podplate_cache_entries',
    help: 'Entries in the read cache.',
    labelNames: ['cache'],
    registers: [metrics],
  });
  const bytes = new Gauge({
    name: 'podplate_cache_template_bytes',
    help: 'Bytes of templates the read cache holds, as counted against CACHE_MAX_MB.',
    registers: [metrics],
  });
  const changes = new Counter({ name: 'podplate_cache_changes_total', help: 'Changes heard from the database.', registers: [metrics] });
  const flushes = new Counter({
    name: 'podplate_cache_flushes_total',
    help: 'Times the whole read cache was dropped: its change signal lost or regained, or a change naming everything.',
    registers: [metrics],
  });
  const trusted = new Gauge({
    name: 'podplate_cache_trusted',
    help: '1 while the read cache is used (the process hears the database change signal), 0 while reads go to the database.',
    registers: [metrics],
  });
  const set = (c: Counter<string>, value: number, labels: Record<string, string> = {}) => {
    c.reset();
    c.inc(labels, value);
  };
  return () => {
    const cache = figures().cache;
    hits.reset();
    misses.reset();
    evictions.reset();
    for (const [label, counts] of [
      ['templates', cache.views],
      ['keys', cache.keys],
    ] as const) {
      hits.inc({ cache: label }, counts.hits);
      misses.inc({ cache: label }, counts.misses);
      evictions.inc({ cache: label }, counts.evictions);
      entries.set({ cache: label }, counts.entries);
    }
    bytes.set(cache.views.size);
    set(changes, cache.changes);
    set(flushes, cache.flushes);
    trusted.set(cache.trusted ? 1 : 0);
  };
}

/** The database's figures (the outbox's backlog) are read at most this often, however many scrape: a scrape costs the same whatever the tenants hold. */
const DATABASE_FIGURES_MS = 5000;

/** Whether `authorization` is "Bearer <token>", compared in constant time. */
function bearsToken(authorization: string | undefined, token: string): boolean {
  const given = Buffer.from(authorization ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Adds the request metrics' hooks to `app` and serves /metrics; with `token` (METRICS_TOKEN), only to
 * `Authorization: Bearer <token>`.
 */
export function registerMetrics(app: FastifyInstance, podplate: Podplate, token?: string): void {
  const metrics = new MetricSet();
  const durations = new RequestDurations([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
  metrics.registerMetric(
    histogramOf(
      'podplate_http_request_duration_seconds',
      'Time from a request to its response, by method, route template and status code.',
      () => durations.read(),
    ) as never,
  );
  // A plain count, read when scraped: cheaper per request than the gauge's own inc and dec.
  let inFlight = 0;
  new Gauge({
    name: 'podplate_http_requests_in_flight',
    help: 'Requests being answered now.',
    registers: [metrics],
    collect() {
      this.set(inFlight);
    },
  });
  const pending = new Gauge({
    name: 'podplate_outbox_pending',
    help: 'Release webhooks not yet acknowledged by the receiver.',
    registers: [metrics],
  });
  const failing = new Gauge({
    name: 'podplate_outbox_failing',
    help: 'Pending release webhooks whose last attempt failed.',
    registers: [metrics],
  });
  const oldest = new Gauge({
    name: 'podplate_outbox_oldest_pending_seconds',
    help: 'Age of the oldest pending release webhook.',
    registers: [metrics],
  });
  let backlog: { at: number; read: Promise<OutboxBacklog> } | undefined;
  const readBacklog = () => {
    if (!backlog || Date.now() - backlog.at >= DATABASE_FIGURES_MS) {
      const read = podplate.releases.backlog();
      backlog = { at: Date.now(), read };
      // A failed read is not kept: the next scrape asks again.
      read.catch(() => {
        if (backlog?.read === read) backlog = undefined;
      });
    }
    return backlog.read;
  };
  const readDatabase = databaseMetrics(metrics, () => podplate.databaseFigures());
  const readCache = cacheMetrics(metrics, () => podplate.databaseFigures());
  const exposed = MetricSet.merge([processMetricSet(), metrics]);

  const observe = (request: FastifyRequest, reply: FastifyReply) => {
    const method = METHODS.has(request.method) ? request.method : 'OTHER';
    durations.observe(method, request.routeOptions.url ?? UNMATCHED, reply.statusCode, reply.elapsedTime / 1000);
  };

  app.addHook('onRequest', (_request, reply, done) => {
    inFlight++;
    // 'close' comes once for every response, sent or cut off: the count never drifts.
    reply.raw.once('close', () => inFlight--);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    observe(request, reply);
    done();
  });

  app.get('/metrics', {
    schema: {
      tags: ['operations'],
      operationId: 'Metrics',
      summary: 'Prometheus metrics: requests, the process, the database and the webhook outbox',
      description:
        'Request durations by route template and status, requests in flight, process and Node figures, the database ' +
        "pool's or group commits' figures, and the backlog of release webhooks (read from the database at most every 5 s), " +
        'in the Prometheus text format. Needs no API key; when the operator sets METRICS_TOKEN, it needs ' +
        '`Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). 503 while the database is unreachable. Takes no query ' +
        'parameter (400 naming any).',
      security: [],
      querystring: NoQuery,
      response: {
        200: { description: 'Prometheus text exposition format.', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...problemResponses(400, 401, 503),
      },
    },
    onRequest: async (request) => {
      if (token && !bearsToken(request.headers.authorization, token)) {
        throw new DomainError('unauthenticated', 'This server asks for its metrics token: send Authorization: Bearer <METRICS_TOKEN>.');
      }
    },
    handler: async (_request, reply) => {
      const backlog = await readBacklog();
      pending.set(backlog.pending);
      failing.set(backlog.failing);
      oldest.set(backlog.oldest ? Math.max(0, (Date.now() - Date.parse(backlog.oldest)) / 1000) : 0);
      readDatabase();
      readCache();
      return reply.type(exposed.contentType).send(await exposed.metrics());
    },
  });
}
