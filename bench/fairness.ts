import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { database, podplate, start, stop } from './processes.ts';

// Fairness between tenants (issue #28): what one tenant's heavy use does to another's. The attack measured,
// before, another tenant's small writes at a 342 ms median on SQLite (229 ms on PostgreSQL) while ~800 KB updates came
// on 8 connections within the request limit, and another tenant's webhook delayed from 0.17 s to 11.8 s (4.7 s) behind
// one tenant's 90 large releases. Here both are run again, with the rate limit counting bodies and delivery in turns.

export interface Fairness {
  dialect: string;
  /** Another tenant's small updates: alone, then while one tenant sends ~800 KB updates on 8 connections. */
  writes: { aloneP50: number; aloneP99: number; p50: number; p99: number; heavyAccepted: number; heavyRefused: number };
  /** Another tenant's webhook: alone, then behind one tenant's 90 large releases on 30 endpoints (ms from its update). */
  delivery: { aloneMs: number; behindMs: number; backlog: number };
}

const percentile = (sorted: number[], q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);

async function call(url: string, key: string, method: string, path: string, body?: unknown) {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

/** Small updates of one template, one after another, for `seconds`: their latencies in ms. */
async function smallUpdates(url: string, key: string, id: string, seconds: number): Promise<number[]> {
  const times: number[] = [];
  const until = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < until; i++) {
    const started = performance.now();
    const r = await call(url, key, 'PATCH', `/v1/templates/${id}`, { readme: `small ${i}` });
    if (r.status !== 200) throw new Error(`a small update: ${r.status} ${JSON.stringify(r.body)}`);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

const largeEnv = (i: number) => Object.fromEntries(Array.from({ length: 26 }, (_, v) => [`V${v}`, `${i}-${v}-`.padEnd(30_000, 'x')]));

async function writes(url: string, heavy: string, light: string, seconds: number): Promise<Fairness['writes']> {
  const mine = (await call(url, light, 'POST', '/v1/templates', { name: 'light', imageName: 'ubuntu' })).body.id as string;
  const alone = await smallUpdates(url, light, mine, seconds);
  const targets = await Promise.all(
    Array.from(
      { length: 8 },
      async (_, c) => (await call(url, heavy, 'POST', '/v1/templates', { name: `heavy ${c}`, imageName: 'ubuntu' })).body.id as string,
    ),
  );
  let accepted = 0;
  let refused = 0;
  let running = true;
  const heavyLoad = targets.map(async (id, c) => {
    for (let i = 0; running; i++) {
      const r = await call(url, heavy, 'PATCH', `/v1/templates/${id}`, { env: largeEnv(c * 100_000 + i) });
      if (r.status === 200) accepted++;
      else if (r.status === 429) refused++;
      else throw new Error(`a large update: ${r.status}`);
    }
  });
  const during = await smallUpdates(url, light, mine, seconds);
  running = false;
  await Promise.all(heavyLoad);
  return {
    aloneP50: percentile(alone, 0.5),
    aloneP99: percentile(alone, 0.99),
    p50: percentile(during, 0.5),
    p99: percentile(during, 0.99),
    heavyAccepted: accepted / seconds,
    heavyRefused: refused / seconds,
  };
}

/** A receiver that takes `delayMs` over each webhook, as a real one does, and tells when each endpoint's arrives. */
function receiver(delayMs: number) {
  const arrived = new Map<string, number>();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (d) => {
      body += d;
    });
    request.on('end', () => {
      setTimeout(() => {
        const endpoint = JSON.parse(body).data.endpoint.id as string;
        if (!arrived.has(endpoint)) arrived.set(endpoint, performance.now());
        response.end();
      }, delayMs);
    });
  });
  return {
    arrived,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/hook`)),
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function bound(url: string, key: string, name: string, env?: Record<string, string>) {
  const t = (await call(url, key, 'POST', '/v1/templates', { name, imageName: 'ubuntu', isServerless: true, ...(env ? { env } : {}) }))
    .body;
  const e = (await call(url, key, 'POST', '/v1/endpoints', { name, templateId: t.id })).body;
  return { template: t.id as string, endpoint: e.id as string };
}

/** The time from a change of `template` to the webhook of its endpoint, in ms. */
async function webhookDelay(url: string, key: string, hook: ReturnType<typeof receiver>, target: { template: string; endpoint: string }) {
  hook.arrived.delete(target.endpoint);
  const started = performance.now();
  const r = await call(url, key, 'PATCH', `/v1/templates/${target.template}`, { readme: `now ${started}` });
  if (r.status !== 200) throw new Error(`an update: ${r.status}`);
  while (!hook.arrived.has(target.endpoint)) await new Promise((resolve) => setTimeout(resolve, 5));
  return Math.round((hook.arrived.get(target.endpoint) as number) - started);
}

export async function fairness(dialect: string, seconds: number): Promise<Fairness> {
  const db = await database(dialect, 'fairness');
  const hook = receiver(20);
  const hookUrl = await hook.listen();
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const base = { DATABASE_URL: db.url, LOG_LEVEL: 'warn', SECRETS_KEY: randomBytes(32).toString('base64') };
  try {
    podplate(['migrate'], base);
    const heavy = podplate(['keys', 'create', '--user', 'heavy'], base);
    const light = podplate(['keys', 'create', '--user', 'light'], base);
    // The default rate limit, which counts bodies: the attack came within the request limit.
    let server = await start(['bin/podplate.js', 'serve'], base, false);
    const written = await writes(server.url, heavy, light, seconds);
    await stop(server);

    // Delivery alone measures the turns, not the limit.
    server = await start(
      ['bin/podplate.js', 'serve'],
      { ...base, RATE_LIMIT_PER_MINUTE: '0', RELEASE_WEBHOOK_URL: hookUrl, RELEASE_WEBHOOK_SECRET: secret },
      false,
    );
    const other = await bound(server.url, light, 'light worker');
    const aloneMs = await webhookDelay(server.url, light, hook, other);
    const endpoints = await Promise.all(Array.from({ length: 30 }, (_, i) => bound(server.url, heavy, `heavy worker ${i}`)));
    for (let i = 0; i < 90; i++) {
      const r = await call(server.url, heavy, 'PATCH', `/v1/templates/${endpoints[i % 30]?.template}`, { env: largeEnv(i) });
      if (r.status !== 200) throw new Error(`a large release: ${r.status}`);
    }
    const behindMs = await webhookDelay(server.url, light, hook, other);
    await stop(server);
    return { dialect, writes: written, delivery: { aloneMs, behindMs, backlog: 90 } };
  } finally {
    await hook.close();
    await db.drop();
  }
}
