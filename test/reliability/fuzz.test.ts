import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { escapePointer, unknownField, validCreate, validUpdate, wrongValues } from '../support/arbitraries.ts';
import { forEachDialect, type Harness, type Reply, startHarness } from '../support/harness.ts';

// Property-based requests over every route. Oracle: never a 5xx or a hang; every refusal is a problem body;
// where one field is at fault, the problem names it; a request the schema accepts is never refused.
// FUZZ_RUNS sets the number of cases (2,000 in `npm test`, 50,000 in `npm run test:fuzz`).

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
// A fixed seed keeps CI repeatable; FUZZ_SEED=random (or any number) explores other cases.
const SEED = process.env.FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED ?? 20261122);
process.stderr.write(`fuzzing with FUZZ_SEED=${SEED}, FUZZ_RUNS=${RUNS}\n`);
const share = (fraction: number) => Math.max(1, Math.round(RUNS * fraction));
const HANG_MS = 10_000;

forEachDialect('fuzzing', (dialect) => {
  let h: Harness;
  let alice: string;
  let own: { id: string; revision: number };
  let serial = 0;
  const unique = (name: string) => `${name.slice(0, 200)} #${serial++}`;

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    own = (await h.call('POST', '/v1/templates', { key: alice, body: { name: 'fuzz target', imageName: 'ubuntu', isServerless: true } }))
      .body;
  });
  after(() => h.close());

  async function send(method: InjectOptions['method'], url: string, options: Parameters<Harness['call']>[2] = {}): Promise<Reply> {
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms: ${method} ${url}`)), HANG_MS);
    });
    try {
      return await Promise.race([h.call(method, url, options), hang]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** What every answer must be, whatever the request. */
  function wellFormed(r: Reply, what: string): void {
    assert.ok(r.status < 500, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
    if (r.status >= 400) {
      assert.match(String(r.headers['content-type']), /^application\/problem\+json/, what);
      assert.equal(r.body?.status, r.status, what);
      for (const member of ['type', 'title', 'detail']) assert.equal(typeof r.body?.[member], 'string', `${what}: ${member}`);
      for (const e of r.body.errors ?? [])
        assert.ok(typeof e.path === 'string' && typeof e.message === 'string' && e.message.length > 0, what);
    }
  }

  function namesField(r: Reply, field: string, what: string): void {
    assert.equal(r.status, 400, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
    const paths: string[] = r.body.errors.map((e: { path: string }) => e.path);
    assert.ok(
      paths.some((p) => p === `/${field}` || p.startsWith(`/${field}/`)),
      `${what}: errors ${JSON.stringify(paths)} name ${field}`,
    );
  }

  test(`valid creates are accepted (${share(0.15)} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(validCreate, async (body) => {
        const r = await send('POST', '/v1/templates', { key: alice, body: { ...body, name: unique(body.name) } });
        assert.equal(r.status, 200, `${JSON.stringify(body).slice(0, 300)} → ${r.text.slice(0, 300)}`);
        for (const [k, v] of Object.entries(body)) if (k !== 'name') assert.equal(JSON.stringify(r.body[k]), JSON.stringify(v), k);
      }),
      { numRuns: share(0.15), seed: SEED + 1 },
    );
  });

  test(`valid updates are accepted (${share(0.1)} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(validUpdate, fc.constantFrom('POST', 'PATCH'), async (body, method) => {
        const update = body.name === undefined ? body : { ...body, name: unique(body.name) };
        const url = method === 'POST' ? `/v1/templates/${own.id}/update` : `/v1/templates/${own.id}`;
        const r = await send(method, url, { key: alice, body: update });
        assert.equal(r.status, 200, `${JSON.stringify(update).slice(0, 300)} → ${r.text.slice(0, 300)}`);
      }),
      { numRuns: share(0.1), seed: SEED + 2 },
    );
  });

  test(`a wrong value in one field is refused naming that field (${share(0.3)} cases)`, async () => {
    const field = fc.constantFrom(...Object.keys(wrongValues));
    await fc.assert(
      fc.asyncProperty(
        validCreate,
        field.chain((f) => fc.tuple(fc.constant(f), wrongValues[f] as fc.Arbitrary<unknown>)),
        fc.boolean(),
        async (body, [f, value], update) => {
          const what = `${update ? 'update' : 'create'} ${f}=${JSON.stringify(value)?.slice(0, 80)}`;
          if (update && (f === 'category' || f === 'isServerless')) {
            const r = await send('PATCH', `/v1/templates/${own.id}`, { key: alice, body: { [f]: value } });
            wellFormed(r, what);
            return namesField(r, f, what);
          }
          const sent = update ? { [f]: value } : { ...body, name: unique(body.name), [f]: value };
          const r = await send(update ? 'PATCH' : 'POST', update ? `/v1/templates/${own.id}` : '/v1/templates', { key: alice, body: sent });
          wellFormed(r, what);
          if (r.status === 413) return; // a huge wrong value may exceed the body limit first
          namesField(r, f, what);
        },
      ),
      { numRuns: share(0.3), seed: SEED + 3 },
    );
  });

  test(`unknown fields are refused by name (${share(0.05)} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(
        validCreate,
        unknownField,
        fc.jsonValue({ maxDepth: 2 }).filter((v) => !/__proto__|constructor/.test(JSON.stringify(v))),
        async (body, key, value) => {
          const r = await send('POST', '/v1/templates', { key: alice, body: { ...body, name: unique(body.name), [key]: value } });
          wellFormed(r, key);
          namesField(r, escapePointer(key), `unknown ${key}`);
        },
      ),
      { numRuns: share(0.05), seed: SEED + 4 },
    );
  });

  test(`any JSON value, truncated JSON or bytes as a body gets a 4xx problem (${share(0.2)} cases)`, async () => {
    const routes = [
      ['POST', '/v1/templates'],
      ['PATCH', () => `/v1/templates/${own.id}`],
      ['POST', () => `/v1/templates/${own.id}/update`],
      ['POST', () => `/v1/templates/${own.id}/rollback`],
      ['POST', '/v1/endpoints'],
      ['POST', () => `/v1/templates/${own.id}/usage`],
      ['POST', '/v1/containerregistryauth'],
    ] as const;
    const body = fc.oneof(
      fc.json({ maxDepth: 3 }),
      validCreate.chain((b) => {
        const text = JSON.stringify(b);
        return fc.integer({ min: 0, max: text.length - 1 }).map((cut) => text.slice(0, cut));
      }),
      fc.string({ unit: 'binary', maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), body, async ([method, path], text) => {
        const url = typeof path === 'function' ? path() : path;
        const r = await send(method, url, { key: alice, body: text, headers: { 'content-type': 'application/json' } });
        wellFormed(r, `${method} ${url} ${text.slice(0, 100)}`);
        if (r.status === 400 && !isObjectJson(text))
          assert.ok(
            r.body.errors?.some((e: { path: string }) => e.path === ''),
            `the body is named: ${r.text}`,
          );
      }),
      { numRuns: share(0.2), seed: SEED + 5 },
    );
  });

  function isObjectJson(text: string): boolean {
    try {
      const v = JSON.parse(text);
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    } catch {
      return false;
    }
  }

  test(`bad flags, ids, paging, headers and content types get a 4xx problem (${share(0.2)} cases)`, async () => {
    const flag = fc.constantFrom('includeEndpointBoundTemplates', 'includePublicTemplates', 'includePlatformTemplates', 'isServerless');
    const notBool = fc.string({ maxLength: 10 }).filter((s) => s !== 'true' && s !== 'false');
    const request = fc.oneof(
      fc
        .tuple(flag, notBool)
        .map(([f, v]) => ({ method: 'GET' as const, url: `/v1/templates?${f}=${encodeURIComponent(v)}`, field: f, in: 'query' })),
      fc
        .tuple(fc.constantFrom('limit', 'cursor', 'category', 'q'), fc.string({ maxLength: 300 }))
        .map(([f, v]) => ({ method: 'GET' as const, url: `/v1/templates?${f}=${encodeURIComponent(v)}` })),
      fc.string({ minLength: 1, maxLength: 100 }).map((id) => ({ method: 'GET' as const, url: `/v1/templates/${encodeURIComponent(id)}` })),
      fc
        .tuple(fc.constantFrom('GET', 'DELETE', 'PATCH', 'POST'), fc.string({ minLength: 1, maxLength: 70 }))
        .map(([method, id]) => ({ method, url: `/v1/endpoints/${encodeURIComponent(id)}` })),
      fc
        .tuple(fc.constantFrom('GET', 'DELETE'), fc.string({ minLength: 1, maxLength: 70 }), fc.constantFrom('', '/credentials'))
        .map(([method, id, sub]) => ({ method, url: `/v1/containerregistryauth/${encodeURIComponent(id)}${sub}` })),
      fc.string({ maxLength: 200 }).map((v) => ({
        method: 'PATCH' as const,
        url: `/v1/templates/${own.id}`,
        headers: { 'if-match': v.replace(/[^\x20-\x7e]/g, '') },
        body: '{}',
      })),
      fc.string({ maxLength: 300 }).map((v) => ({
        method: 'POST' as const,
        url: '/v1/templates',
        headers: { 'idempotency-key': v.replace(/[^\x20-\x7e]/g, '') || 'x' },
        body: '{}',
      })),
      fc.string({ maxLength: 60 }).map((v) => ({
        method: 'POST' as const,
        url: '/v1/templates',
        headers: { 'content-type': v.replace(/[^\x20-\x7e]/g, '') || 'x/y' },
        body: '{"name":"x","imageName":"y"}',
      })),
      fc.string({ maxLength: 100 }).map((v) => ({
        method: 'GET' as const,
        url: '/v1/templates',
        headers: { authorization: v.replace(/[^\x20-\x7e]/g, '') },
        anonymous: true,
      })),
    );
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const {
          method,
          url,
          headers = {},
          body,
        } = req as { method: InjectOptions['method']; url: string; headers?: Record<string, string>; body?: string };
        const r = await send(method, url, { key: 'anonymous' in req ? undefined : alice, headers, body });
        wellFormed(r, `${method} ${url} ${JSON.stringify(headers)}`);
        if ('field' in req) namesField(r, String(req.field), url);
      }),
      { numRuns: share(0.2), seed: SEED + 6 },
    );
  });
});
