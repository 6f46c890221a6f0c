import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import {
  badPercentEncoding,
  deepNesting,
  escapePointer,
  hostileText,
  idLike,
  jsonText,
  percentEncode,
  RawJson,
  SECRET_NAME,
  secretName,
  unknownField,
  validCreate,
  validEndpoint,
  validEndpointUpdate,
  validProgress,
  validRegistryAuth,
  validSecret,
  validUpdate,
  validUsage,
  wrongEndpointUpdateValues,
  wrongEndpointValues,
  wrongProgressValues,
  wrongRegistryAuthValues,
  wrongResolveValues,
  wrongRollbackValues,
  wrongSecretValues,
  wrongUsageValues,
  wrongValues,
} from '../support/arbitraries.ts';
import { forEachDialect, type Harness, type Reply, startHarness } from '../support/harness.ts';

// Property-based requests over every route, on both databases. Oracle: never a 5xx or a hang; every refusal is a
// problem body; a 400 names each field it is about with the part of the request it is in (body, query, path,
// header); a request the schemas accept is never refused. The values: wrong types, values beyond every bound,
// numbers no field takes (1e400, fractions), nesting thousands deep, NUL and lone UTF-16 surrogates in any string or
// key (escaped in JSON bodies, percent-encoded as invalid UTF-8 in URLs), and junk in every header we read.
// FUZZ_RUNS sets the number of cases (2,000 in `npm test`, 50,000 in `npm run test:fuzz`).

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
// A fixed seed keeps CI repeatable; FUZZ_SEED=random (or any number) explores other cases.
const SEED = process.env.FUZZ_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED ?? 20261122);
process.stderr.write(`fuzzing with FUZZ_SEED=${SEED}, FUZZ_RUNS=${RUNS}\n`);
const share = (fraction: number) => Math.max(1, Math.round(RUNS * fraction));
const HANG_MS = 10_000;
// A failure shows what the server answered, not only the request.
fc.configureGlobal({ includeErrorInReport: true });

type Part = 'body' | 'query' | 'path' | 'header';
type Method = InjectOptions['method'];

/**
 * Every route of the API, as the router knows it (a test below holds this list equal to the router's): the path and
 * query cases below cover each one.
 */
const ROUTES: { method: Method; path: string; query?: string[] }[] = [
  { method: 'POST', path: '/v1/templates' },
  {
    method: 'GET',
    path: '/v1/templates',
    query: [
      'includeEndpointBoundTemplates',
      'includePublicTemplates',
      'includePlatformTemplates',
      'category',
      'scope',
      'sort',
      'isServerless',
      'q',
      'limit',
      'cursor',
    ],
  },
  {
    method: 'GET',
    path: '/v1/templates/:templateId',
    query: ['includeEndpointBoundTemplates', 'includePublicTemplates', 'includePlatformTemplates'],
  },
  { method: 'POST', path: '/v1/templates/:templateId/update' },
  { method: 'PATCH', path: '/v1/templates/:templateId' },
  { method: 'DELETE', path: '/v1/templates/:templateId' },
  { method: 'GET', path: '/v1/templates/:templateId/revisions', query: ['limit', 'cursor'] },
  { method: 'POST', path: '/v1/templates/:templateId/rollback' },
  { method: 'POST', path: '/v1/templates/:templateId/usage' },
  { method: 'POST', path: '/v1/templates/:templateId/resolve' },
  // Image checks are off in the fuzzed app: a check answers the template, a repin a 409 (no registry is reached).
  { method: 'POST', path: '/v1/templates/:templateId/image-check' },
  { method: 'POST', path: '/v1/templates/:templateId/repin' },
  { method: 'POST', path: '/v1/endpoints' },
  { method: 'GET', path: '/v1/endpoints', query: ['limit', 'cursor'] },
  { method: 'GET', path: '/v1/endpoints/:endpointId' },
  { method: 'PATCH', path: '/v1/endpoints/:endpointId' },
  { method: 'DELETE', path: '/v1/endpoints/:endpointId' },
  { method: 'GET', path: '/v1/endpoints/:endpointId/releases', query: ['limit', 'cursor'] },
  { method: 'POST', path: '/v1/endpoints/:endpointId/releases/:releaseId/progress' },
  { method: 'POST', path: '/v1/containerregistryauth' },
  { method: 'GET', path: '/v1/containerregistryauth', query: ['limit', 'cursor'] },
  { method: 'GET', path: '/v1/containerregistryauth/:containerRegistryAuthId' },
  { method: 'GET', path: '/v1/containerregistryauth/:containerRegistryAuthId/credentials' },
  { method: 'DELETE', path: '/v1/containerregistryauth/:containerRegistryAuthId' },
  { method: 'GET', path: '/v1/me' },
  { method: 'PUT', path: '/v1/secrets/:name' },
  { method: 'GET', path: '/v1/secrets', query: ['limit', 'cursor'] },
  { method: 'DELETE', path: '/v1/secrets/:name' },
  { method: 'POST', path: '/v1/accounts' },
  { method: 'POST', path: '/v1/accounts/:account/keys' },
  { method: 'GET', path: '/v1/accounts/:account/keys' },
  { method: 'DELETE', path: '/v1/accounts/:account/keys/:keyId' },
];

/** What each query parameter accepts, written from the OpenAPI document's words: the oracle of the query cases. */
const flag = (v: string) => v === 'true' || v === 'false';
const QUERY_RULES: Record<string, (value: string) => boolean> = {
  includeEndpointBoundTemplates: flag,
  includePublicTemplates: flag,
  includePlatformTemplates: flag,
  isServerless: flag,
  category: (v) => ['NVIDIA', 'AMD', 'CPU'].includes(v),
  scope: (v) => ['own', 'public', 'platform'].includes(v),
  sort: (v) => ['newest', 'popular'].includes(v),
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what q may not hold
  q: (v) => [...v].length >= 1 && [...v].length <= 255 && !/[\u0000-\u001f\u007f-\u009f]/.test(v) && !LONE_SURROGATE.test(v),
  limit: (v) => /^-?[0-9]+$/.test(v) && Number(v) >= 1 && Number(v) <= 1000,
  // A position in the newest-first order (p…), or in the popular one (r…), which only the list of templates orders by.
  cursor: (v) => /^[A-Za-z0-9_-]{1,64}$/.test(v) && cursorKind(v) !== undefined,
};
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const cursorOf = (position: number) => Buffer.from(`p${position}`).toString('base64url');
const popularCursorOf = (runtime: number, seq: number) => Buffer.from(`r${runtime}.${seq}`).toString('base64url');
/** The order a cursor is a position in, or undefined for one this service never issues. */
function cursorKind(cursor: string): 'newest' | 'popular' | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('latin1');
  if (/^p[0-9]{1,15}$/.test(text)) return 'newest';
  if (/^r[0-9]{1,15}\.[0-9]{1,15}$/.test(text)) return 'popular';
  return undefined;
}

/**
 * The parameters refused by a rule between them, when each value is one its own rule takes: `sort=popular` needs
 * `scope=public` or `scope=platform`, and a cursor must be one of the list's order (only the list of templates has a
 * popular one).
 */
function refusedTogether(path: string, parameters: Record<string, string>): string[] {
  const { cursor, scope, sort = 'newest' } = parameters;
  const kind = cursor === undefined ? undefined : cursorKind(cursor);
  if (path !== '/v1/templates') return kind === 'popular' ? ['cursor'] : [];
  const refused: string[] = [];
  if (sort === 'popular' && scope !== 'public' && scope !== 'platform') refused.push('sort');
  if (kind !== undefined && kind !== sort) refused.push('cursor');
  return refused;
}

/** What each path parameter takes: an id, but for a secret's name and an account's. */
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;
const PATH_RULES: Record<string, { rule: RegExp; longest: number; good: fc.Arbitrary<string> }> = {
  name: { rule: SECRET_NAME, longest: 128, good: secretName },
  account: { rule: ACCOUNT_NAME, longest: 128, good: fc.stringMatching(ACCOUNT_NAME) },
};
const pathRule = (parameter: string) => PATH_RULES[parameter] ?? { rule: ID, longest: 64, good: idLike };

/**
 * The routes the router serves, `METHOD /path`, read from Fastify's printed tree (each line a segment, indented four
 * characters a level below its parent, with its methods in parentheses). HEAD is left out: Fastify adds it to each GET.
 */
function routerRoutes(tree: string): string[] {
  const parents: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^(.*?)[└├]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] as string).length / 4;
    const path = (parents[depth - 1] ?? '') + match[2];
    parents[depth] = path;
    for (const method of match[3]?.split(', ') ?? []) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes;
}

/** The JSON Pointers of every string value and every member name in `value`. */
function textPlaces(value: unknown, path = ''): { path: string; key: boolean }[] {
  if (typeof value === 'string') return [{ path, key: false }];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const here = `${path}/${Array.isArray(value) ? k : escapePointer(k)}`;
    return [...(Array.isArray(value) ? [] : [{ path: here, key: true }]), ...textPlaces(v, here)];
  });
}

/** `value` with the string at `place` (or the member name there) replaced by `text`; the place's new pointer. */
function plant(value: unknown, place: { path: string; key: boolean }, text: string): { body: unknown; path: string } {
  const copy = structuredClone(value) as Record<string, unknown>;
  const segments = place.path
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = segments.pop() as string;
  let parent: Record<string, unknown> = copy;
  for (const s of segments) parent = parent[s] as Record<string, unknown>;
  const prefix = place.path.slice(0, place.path.length - escapePointer(last).length);
  if (!place.key) {
    parent[last] = text;
    return { body: copy, path: place.path };
  }
  // A renamed member keeps its place among the others (some fields are checked in order).
  const entries = Object.entries(parent).map(([k, v]) => (k === last ? [text, v] : [k, v]));
  for (const k of Object.keys(parent)) delete parent[k];
  Object.assign(parent, Object.fromEntries(entries));
  return { body: copy, path: prefix + escapePointer(text) };
}

forEachDialect('fuzzing', (dialect) => {
  let h: Harness;
  let alice: string;
  let platform: string;
  let own: { id: string; revision: number };
  let endpoint: { id: string };
  let release: { id: string };
  let auth: { id: string };
  let pod: { id: string };
  /** Alice's secret the writing route sets again and again; path cases read it as `own`, never deleting it. */
  const SECRET = 'FUZZ_SECRET';
  let serial = 0;
  const unique = (name: string) => `${name.slice(0, 200)} #${serial++}`;

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    platform = await h.key('platform', 'platform');
    own = (await h.call('POST', '/v1/templates', { key: alice, body: { name: 'fuzz target', imageName: 'ubuntu', isServerless: true } }))
      .body;
    // Bound, so that every change the fuzzer makes to it starts a release too.
    endpoint = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'fuzz endpoint', templateId: own.id } })).body;
    await h.call('PATCH', `/v1/templates/${own.id}`, { key: alice, body: { readme: 'first release' } });
    [release] = (await h.call('GET', `/v1/endpoints/${endpoint.id}/releases`, { key: alice })).body;
    assert.ok(release?.id);
    auth = (
      await h.call('POST', '/v1/containerregistryauth', { key: alice, body: { name: 'fuzz registry', username: 'u', password: 'p' } })
    ).body;
    assert.ok(auth?.id);
    pod = (await h.call('POST', '/v1/templates', { key: alice, body: { name: 'fuzz pod', imageName: 'ubuntu' } })).body;
    // Public templates with runtime, for the popular order to have an order.
    for (const runtimeInMin of [5, 500, 50]) {
      const t = await h.call('POST', '/v1/templates', {
        key: alice,
        body: { name: `fuzz popular ${runtimeInMin}`, imageName: 'ubuntu', isPublic: true },
      });
      const usage = { usageId: `fuzz-popular-${runtimeInMin}`, runtimeInMin, earned: 0 };
      assert.equal((await h.call('POST', `/v1/templates/${t.body.id}/usage`, { key: platform, body: usage })).status, 200);
    }
    // A few secrets for the pages of GET /v1/secrets to hold.
    for (const name of [SECRET, 'FUZZ_PAGE_1', 'FUZZ_PAGE_2', 'FUZZ_PAGE_3', 'FUZZ_PAGE_4'])
      assert.equal((await h.call('PUT', `/v1/secrets/${name}`, { key: alice, body: { value: name.toLowerCase() } })).status, 201);
  });
  after(() => h.close());

  async function send(
    method: Method,
    url: string,
    options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${HANG_MS} ms: ${method} ${url}`)), HANG_MS);
    });
    const body = options.body === undefined || typeof options.body === 'string' ? options.body : jsonText(options.body);
    try {
      return await Promise.race([h.call(method, url, { ...options, body }), hang]);
    } finally {
      clearTimeout(timer);
    }
  }

  const show = (value: unknown) => (typeof value === 'string' ? value : jsonText(value)).slice(0, 200);

  /** What every answer must be, whatever the request. */
  function wellFormed(r: Reply, what: string): void {
    assert.ok(r.status < 500, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
    if (r.status >= 400) {
      assert.match(String(r.headers['content-type']), /^application\/problem\+json/, what);
      assert.equal(r.body?.status, r.status, what);
      for (const member of ['type', 'title', 'detail']) assert.equal(typeof r.body?.[member], 'string', `${what}: ${member}`);
      for (const e of r.body.errors ?? []) {
        assert.ok(typeof e.path === 'string' && typeof e.message === 'string' && e.message.length > 0, what);
        assert.ok(['body', 'query', 'path', 'header'].includes(e.in), `${what}: in ${e.in}`);
      }
    }
    if (r.status === 400) assert.ok(r.body.errors?.length > 0, `${what}: a 400 names what is wrong: ${r.text.slice(0, 300)}`);
  }

  /** A 400 whose errors name `pointer` (or a place inside it) in `part`. */
  function names(r: Reply, pointer: string, part: Part, what: string): void {
    wellFormed(r, what);
    assert.equal(r.status, 400, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
    const named = r.body.errors.filter(
      (e: { in: string; path: string }) => e.in === part && (e.path === pointer || e.path.startsWith(`${pointer}/`)),
    );
    assert.ok(named.length > 0, `${what}: errors ${JSON.stringify(r.body.errors).slice(0, 300)} name ${part} ${pointer}`);
  }

  /** The writing routes, each with a valid body, its key, and the values each of its fields must refuse. */
  const writers = () => [
    {
      what: 'create a template',
      method: 'POST' as Method,
      url: '/v1/templates',
      key: alice,
      valid: validCreate.map((b) => ({ ...b, name: unique(b.name) })),
      wrong: wrongValues,
    },
    {
      what: 'update a template',
      method: 'PATCH' as Method,
      url: `/v1/templates/${own.id}`,
      key: alice,
      valid: validUpdate.map((b) => (b.name === undefined ? b : { ...b, name: unique(b.name) })),
      wrong: wrongValues,
    },
    {
      what: 'update a template (POST)',
      method: 'POST' as Method,
      url: `/v1/templates/${own.id}/update`,
      key: alice,
      valid: validUpdate.map((b) => (b.name === undefined ? b : { ...b, name: unique(b.name) })),
      wrong: wrongValues,
    },
    {
      what: 'create an endpoint',
      method: 'POST' as Method,
      url: '/v1/endpoints',
      key: alice,
      valid: validEndpoint(idLike).map((b) => ({ ...b, name: unique(b.name) })),
      wrong: wrongEndpointValues,
    },
    {
      what: 'report usage',
      method: 'POST' as Method,
      url: `/v1/templates/${own.id}/usage`,
      key: platform,
      valid: validUsage.map((u) => ({ ...u, usageId: `${u.usageId}-${serial++}` })),
      wrong: wrongUsageValues,
    },
    {
      what: 'roll back',
      method: 'POST' as Method,
      url: `/v1/templates/${own.id}/rollback`,
      key: alice,
      valid: fc.constant({ revision: 1 }),
      wrong: wrongRollbackValues,
    },
    {
      what: 'create a registry auth',
      method: 'POST' as Method,
      url: '/v1/containerregistryauth',
      key: alice,
      valid: validRegistryAuth.map((b) => ({ ...b, name: unique(b.name) })),
      wrong: wrongRegistryAuthValues,
    },
    {
      what: 'update an endpoint',
      method: 'PATCH' as Method,
      url: `/v1/endpoints/${endpoint.id}`,
      key: alice,
      valid: validEndpointUpdate.map((b) => ({ ...b, name: unique(b.name) })),
      wrong: wrongEndpointUpdateValues,
    },
    {
      what: 'set a secret',
      method: 'PUT' as Method,
      url: `/v1/secrets/${SECRET}`,
      key: alice,
      valid: validSecret,
      wrong: wrongSecretValues,
    },
    {
      what: 'resolve a template',
      method: 'POST' as Method,
      url: `/v1/templates/${own.id}/resolve`,
      key: platform,
      valid: fc.constantFrom({ account: 'alice' }, { account: 'platform' }, { account: 'alice', revision: 1 }),
      wrong: wrongResolveValues,
    },
    {
      what: 'report progress',
      method: 'POST' as Method,
      url: `/v1/endpoints/${endpoint.id}/releases/${release.id}/progress`,
      key: platform,
      valid: validProgress,
      wrong: wrongProgressValues,
    },
  ];
  /** A writing route (what it is, its method, URL and key) with a valid body of its own. */
  const writerWithBody = () =>
    fc.oneof(
      ...writers().map(({ valid, wrong: _wrong, ...route }) =>
        fc.tuple(fc.constant(route), valid as fc.Arbitrary<Record<string, unknown>>),
      ),
    );
  const writer = () => fc.constantFrom(...writers().map(({ valid: _v, wrong: _w, ...route }) => route));

  test('the routes fuzzed are every route the router serves under /v1 (the OpenAPI document aside)', () => {
    const served = routerRoutes(h.app.printRoutes({ commonPrefix: false })).filter(
      (r) => r.includes(' /v1/') && r !== 'GET /v1/openapi.json',
    );
    assert.ok(served.length > 0, 'the tree was read');
    assert.deepEqual(served.sort(), ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  test(`valid creates are accepted (${share(0.08)} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(validCreate, async (body) => {
        const r = await send('POST', '/v1/templates', { key: alice, body: { ...body, name: unique(body.name) } });
        assert.equal(r.status, 200, `${show(body)} → ${r.text.slice(0, 300)}`);
        for (const [k, v] of Object.entries(body)) if (k !== 'name') assert.equal(JSON.stringify(r.body[k]), JSON.stringify(v), k);
      }),
      { numRuns: share(0.08), seed: SEED + 1 },
    );
  });

  test(`valid updates are accepted (${share(0.05)} cases)`, async () => {
    await fc.assert(
      fc.asyncProperty(validUpdate, fc.constantFrom('POST', 'PATCH'), async (body, method) => {
        const update = body.name === undefined ? body : { ...body, name: unique(body.name) };
        const url = method === 'POST' ? `/v1/templates/${own.id}/update` : `/v1/templates/${own.id}`;
        const r = await send(method, url, { key: alice, body: update });
        assert.equal(r.status, 200, `${show(update)} → ${r.text.slice(0, 300)}`);
      }),
      { numRuns: share(0.05), seed: SEED + 2 },
    );
  });

  test(`valid requests on the other routes are accepted: endpoints, usage, rollback, progress, secrets, resolve, pages (${share(0.08)} cases)`, async () => {
    const lifecycle = fc
      .record({ template: validCreate, endpoint: validEndpoint(fc.constant('')) })
      .map((c) => ({ kind: 'endpoint' as const, ...c }));
    const usage = validUsage.map((u) => ({ kind: 'usage' as const, usage: u }));
    const rollback = fc.nat().map((n) => ({ kind: 'rollback' as const, n }));
    const progress = validProgress.map((p) => ({ kind: 'progress' as const, progress: p }));
    const registryAuth = validRegistryAuth.map((a) => ({ kind: 'registry auth' as const, auth: a }));
    // The fuzzer's own endpoint, sent back as GET read it or not; a rebind of a new endpoint to a second template.
    const endpointUpdate = fc
      .record({ update: validEndpointUpdate, whole: fc.boolean() })
      .map((c) => ({ kind: 'endpoint update' as const, ...c }));
    // First to a template it can't be bound to (none, a Pod template, one bound elsewhere): refused naming templateId.
    const rebind = fc
      .record({
        from: validCreate,
        to: validCreate,
        endpoint: validEndpoint(fc.constant('')),
        update: validEndpointUpdate,
        wrongTarget: fc.oneof(idLike, fc.constantFrom('pod', 'bound')),
      })
      .map((c) => ({ kind: 'rebind' as const, ...c }));
    // A secret set, listed, resolved into a template's env for its account (pinned to the template's revision, then to
    // one it is not at, however large), replaced, and deleted.
    const secret = fc
      .record({
        name: secretName,
        first: validSecret,
        second: validSecret,
        stale: fc.oneof(
          fc.integer({ min: 2, max: 2 ** 31 - 1 }),
          fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
          fc.constantFrom('4e9', '1e20', '1e300', '9007199254740993').map((t) => new RawJson(t)),
        ),
      })
      .map((c) => ({ kind: 'secret' as const, ...c }));
    const me = fc.constantFrom('alice', 'platform').map((who) => ({ kind: 'me' as const, who }));
    // A template referring to none to tens of thousands of secrets Alice lacks, and then to some she has.
    const references = fc
      .record({
        lacking: fc.oneof(
          { weight: 2, arbitrary: fc.constant(0) },
          { weight: 7, arbitrary: fc.integer({ min: 1, max: 300 }) },
          { weight: 1, arbitrary: fc.integer({ min: 30_000, max: 66_000 }) },
        ),
        had: fc.subarray(['FUZZ_PAGE_1', 'FUZZ_PAGE_2', 'FUZZ_PAGE_3', 'FUZZ_PAGE_4']),
      })
      .map((c) => ({ kind: 'references' as const, ...c }));
    const pages = fc
      .tuple(
        fc.constantFrom(
          '/v1/templates?includePlatformTemplates=true',
          `/v1/templates/${'{id}'}/revisions`,
          '/v1/endpoints',
          '/v1/endpoints/{endpoint}/releases',
          '/v1/containerregistryauth',
          '/v1/secrets',
          '/v1/templates?scope=own',
          '/v1/templates?scope=own&includeEndpointBoundTemplates=true',
          '/v1/templates?scope=public&sort=popular',
          '/v1/templates?scope=public&sort=newest&isServerless=true',
          '/v1/templates?scope=platform&sort=popular',
        ),
        fc.integer({ min: 1, max: 7 }),
      )
      .map(([url, limit]) => ({ kind: 'pages' as const, url, limit }));
    const cases = fc.oneof(lifecycle, usage, rollback, progress, registryAuth, endpointUpdate, rebind, secret, me, references, pages);
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const what = jsonText(c).slice(0, 300);
        if (c.kind === 'endpoint') {
          const t = await send('POST', '/v1/templates', {
            key: alice,
            body: { ...c.template, name: unique(c.template.name), isServerless: true },
          });
          assert.equal(t.status, 200, `${what} → ${t.text.slice(0, 300)}`);
          const body = { ...c.endpoint, name: unique(c.endpoint.name), templateId: t.body.id };
          const e = await send('POST', '/v1/endpoints', { key: alice, body });
          assert.equal(e.status, 200, `${what} → ${e.text.slice(0, 300)}`);
          assert.deepEqual(
            [e.body.name, e.body.templateId, e.body.workersMin, e.body.workersMax, e.body.version],
            [body.name.trim(), t.body.id, body.workersMin ?? 0, body.workersMax ?? 3, 1],
          );
          assert.deepEqual((await send('GET', `/v1/endpoints/${e.body.id}`, { key: alice })).body, e.body);
          assert.equal((await send('DELETE', `/v1/templates/${t.body.id}`, { key: alice })).status, 409, 'a bound template stays');
          assert.equal((await send('DELETE', `/v1/endpoints/${e.body.id}`, { key: alice })).status, 204);
          assert.equal((await send('GET', `/v1/endpoints/${e.body.id}`, { key: alice })).status, 404);
          assert.equal((await send('DELETE', `/v1/templates/${t.body.id}`, { key: alice })).status, 204);
        } else if (c.kind === 'usage') {
          const before = (await send('GET', `/v1/templates/${own.id}?includeEndpointBoundTemplates=true`, { key: alice })).body;
          const report = { ...c.usage, usageId: `${c.usage.usageId.slice(0, 100)}-${serial++}` };
          const r = await send('POST', `/v1/templates/${own.id}/usage`, { key: platform, body: report });
          assert.equal(r.status, 200, `${what} → ${r.text.slice(0, 300)}`);
          assert.equal(r.body.runtimeInMin, before.runtimeInMin + report.runtimeInMin);
          assert.equal(r.body.earned, before.earned + report.earned);
          const again = await send('POST', `/v1/templates/${own.id}/usage`, { key: platform, body: report });
          assert.deepEqual(
            [again.status, again.body.runtimeInMin, again.body.earned],
            [200, r.body.runtimeInMin, r.body.earned],
            'counted once',
          );
        } else if (c.kind === 'rollback') {
          const current = (await send('GET', `/v1/templates/${own.id}?includeEndpointBoundTemplates=true`, { key: alice })).body;
          const revision = 1 + (c.n % current.revision);
          const r = await send('POST', `/v1/templates/${own.id}/rollback`, { key: alice, body: { revision } });
          assert.equal(r.status, 200, `${what} → ${r.text.slice(0, 300)}`);
          assert.ok(r.body.revision === current.revision || r.body.revision === current.revision + 1, `${r.body.revision}`);
        } else if (c.kind === 'registry auth') {
          const body = { ...c.auth, name: unique(c.auth.name) };
          const created = await send('POST', '/v1/containerregistryauth', { key: alice, body });
          assert.equal(created.status, 200, `${what} → ${created.text.slice(0, 300)}`);
          // What its owner sees: the name, never the username or the password.
          assert.deepEqual([created.body.name, 'username' in created.body, 'password' in created.body], [body.name.trim(), false, false]);
          assert.deepEqual((await send('GET', `/v1/containerregistryauth/${created.body.id}`, { key: alice })).body, created.body);
          const credentials = await send('GET', `/v1/containerregistryauth/${created.body.id}/credentials`, { key: platform });
          assert.deepEqual(credentials.body, { username: body.username, password: body.password }, 'the password as given');
          assert.equal((await send('DELETE', `/v1/containerregistryauth/${created.body.id}`, { key: alice })).status, 204);
        } else if (c.kind === 'endpoint update') {
          const current = (await send('GET', `/v1/endpoints/${endpoint.id}`, { key: alice })).body;
          const update = { ...(c.whole ? current : {}), ...c.update, name: unique(c.update.name) };
          const r = await send('PATCH', `/v1/endpoints/${endpoint.id}`, { key: alice, body: update });
          assert.equal(r.status, 200, `${what} → ${r.text.slice(0, 300)}`);
          assert.deepEqual(
            [r.body.name, r.body.templateId, r.body.workersMin, r.body.workersMax, r.body.version],
            [update.name.trim(), own.id, update.workersMin ?? current.workersMin, update.workersMax ?? current.workersMax, current.version],
            'no release without a change of template',
          );
        } else if (c.kind === 'rebind') {
          const [from, to] = await Promise.all(
            [c.from, c.to].map(async (body) => {
              const t = await send('POST', '/v1/templates', {
                key: alice,
                body: { ...body, name: unique(body.name), isServerless: true },
              });
              assert.equal(t.status, 200, `${what} → ${t.text.slice(0, 300)}`);
              return t.body.id as string;
            }),
          );
          const e = await send('POST', '/v1/endpoints', {
            key: alice,
            body: { ...c.endpoint, name: unique(c.endpoint.name), templateId: from },
          });
          assert.equal(e.status, 200, `${what} → ${e.text.slice(0, 300)}`);
          // Not a lookup in an object literal: ids drawn include "constructor" and "__proto__".
          const wrongTarget = c.wrongTarget === 'pod' ? pod.id : c.wrongTarget === 'bound' ? own.id : c.wrongTarget;
          const refused = await send('PATCH', `/v1/endpoints/${e.body.id}`, {
            key: alice,
            body: { ...c.update, name: unique(c.update.name), templateId: wrongTarget },
          });
          wellFormed(refused, `${what}: rebound to ${wrongTarget}`);
          assert.ok([400, 409].includes(refused.status), `${what} → ${refused.status} ${refused.text.slice(0, 300)}`);
          assert.ok(
            refused.body.errors?.some((e: { in: string; path: string }) => e.in === 'body' && e.path === '/templateId'),
            `${what}: ${refused.text.slice(0, 300)} names /templateId`,
          );
          assert.deepEqual((await send('GET', `/v1/endpoints/${e.body.id}`, { key: alice })).body, e.body, 'unchanged');
          const update = { ...c.update, name: unique(c.update.name), templateId: to };
          const r = await send('PATCH', `/v1/endpoints/${e.body.id}`, { key: alice, body: update });
          assert.equal(r.status, 200, `${what} → ${r.text.slice(0, 300)}`);
          assert.deepEqual([r.body.templateId, r.body.version], [to, 2], 'rebound, with a release');
          assert.deepEqual((await send('GET', `/v1/endpoints/${e.body.id}`, { key: alice })).body, r.body);
          assert.equal((await send('DELETE', `/v1/templates/${from}`, { key: alice })).status, 204, 'the old template is unbound');
          assert.equal((await send('DELETE', `/v1/templates/${to}`, { key: alice })).status, 409, 'the new one is bound');
          assert.equal((await send('DELETE', `/v1/endpoints/${e.body.id}`, { key: alice })).status, 204);
          assert.equal((await send('DELETE', `/v1/templates/${to}`, { key: alice })).status, 204);
        } else if (c.kind === 'secret') {
          const put = await send('PUT', `/v1/secrets/${c.name}`, { key: alice, body: c.first });
          assert.ok(put.status === 201 || put.status === 200, `${what} → ${put.status} ${put.text.slice(0, 300)}`);
          assert.deepEqual(Object.keys(put.body), ['name', 'createdAt', 'updatedAt'], 'never the value');
          const t = await send('POST', '/v1/templates', {
            key: alice,
            body: { name: unique('resolved'), imageName: 'ubuntu', env: { PLAIN: 'as is', REF: `<{{ secret.${c.name} }}>` } },
          });
          assert.equal(t.status, 200, `${what} → ${t.text.slice(0, 300)}`);
          const resolve = (revision?: number | RawJson) =>
            send('POST', `/v1/templates/${t.body.id}/resolve`, {
              key: platform,
              body: revision === undefined ? { account: 'alice' } : { account: 'alice', revision },
            });
          const resolved = await resolve(t.body.revision);
          assert.equal(resolved.status, 200, `${what} → ${resolved.text.slice(0, 300)}`);
          assert.deepEqual(resolved.body.template.env, { PLAIN: 'as is', REF: `<${c.first.value}>` });
          const stale = await resolve(c.stale);
          assert.equal(stale.status, 412, `${what} → ${stale.text.slice(0, 300)}`);
          assert.equal((await send('PUT', `/v1/secrets/${c.name}`, { key: alice, body: c.second })).status, 200, 'replaced');
          assert.equal((await resolve()).body.template.env.REF, `<${c.second.value}>`);
          const listed = (await send('GET', '/v1/secrets?limit=1000', { key: alice })).body;
          assert.ok(
            listed.some((s: { name: string }) => s.name === c.name),
            'listed',
          );
          assert.equal((await send('DELETE', `/v1/secrets/${c.name}`, { key: alice })).status, 204);
          assert.equal((await send('DELETE', `/v1/secrets/${c.name}`, { key: alice })).status, 404);
          const missing = await resolve();
          assert.deepEqual([missing.status, missing.body.missingSecrets], [422, [c.name]], `${what} → ${missing.text.slice(0, 300)}`);
          assert.equal((await send('DELETE', `/v1/templates/${t.body.id}`, { key: alice })).status, 204);
        } else if (c.kind === 'references') {
          // Three characters each, so that 66,000 fit in a body: past what one SQL statement may bind on either database.
          const first = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_';
          const rest = `${first}0123456789`;
          const lacking = Array.from(
            { length: c.lacking },
            (_, i) => `${first[Math.floor(i / 63 ** 2)]}${rest[Math.floor(i / 63) % 63]}${rest[i % 63]}`,
          );
          const env: Record<string, string> = { HAD: c.had.map((n) => `{{ secret.${n} }}`).join(' ') };
          for (let k = 0; k * 300 < lacking.length; k++)
            env[`K${k}`] = lacking
              .slice(k * 300, (k + 1) * 300)
              .map((n) => `{{secret.${n}}}`)
              .join('');
          const t = await send('POST', '/v1/templates', { key: alice, body: { name: unique('references'), imageName: 'ubuntu', env } });
          assert.equal(t.status, 200, `${what} → ${t.text.slice(0, 300)}`);
          const r = await send('POST', `/v1/templates/${t.body.id}/resolve`, { key: platform, body: { account: 'alice' } });
          if (lacking.length > 0) assert.deepEqual([r.status, r.body?.missingSecrets], [422, lacking], `${what} → ${r.text.slice(0, 300)}`);
          else {
            assert.equal(r.status, 200, `${what} → ${r.text.slice(0, 300)}`);
            assert.equal(r.body.template.env.HAD, c.had.map((n) => n.toLowerCase()).join(' '));
          }
          assert.equal((await send('DELETE', `/v1/templates/${t.body.id}`, { key: alice })).status, 204);
        } else if (c.kind === 'me') {
          const r = await send('GET', '/v1/me', { key: c.who === 'alice' ? alice : platform });
          assert.equal(r.status, 200, r.text);
          assert.deepEqual(
            [r.body.accountName, r.body.role, r.body.isPlatform],
            [c.who, c.who === 'alice' ? 'user' : 'platform', c.who !== 'alice'],
          );
        } else if (c.kind === 'progress') {
          const [newest] = (await send('GET', `/v1/endpoints/${endpoint.id}/releases?limit=1`, { key: alice })).body;
          const r = await send('POST', `/v1/endpoints/${endpoint.id}/releases/${newest.id}/progress`, {
            key: platform,
            body: c.progress,
          });
          if (['completed', 'failed', 'superseded'].includes(newest.status))
            assert.equal(r.status, 409, `${what} → ${r.text.slice(0, 300)}`);
          else {
            assert.equal(r.status, 200, `${what} → ${r.text.slice(0, 300)}`);
            assert.deepEqual(
              [r.body.status, r.body.workersUpdated, r.body.workersTotal],
              [c.progress.status, c.progress.workersUpdated, c.progress.workersTotal],
            );
          }
        } else {
          let url: string | undefined =
            `${c.url.replace('{id}', own.id).replace('{endpoint}', endpoint.id)}${c.url.includes('?') ? '&' : '?'}limit=${c.limit}`;
          const seen = new Set<string>();
          for (let page = 0; url && page < 4; page++) {
            const r = await send('GET', url, { key: alice });
            assert.equal(r.status, 200, `${url} → ${r.text.slice(0, 300)}`);
            assert.ok(r.body.length <= c.limit);
            for (const item of r.body) {
              const id = item.id ?? (item.revision === undefined ? item.name : `r${item.revision}`);
              assert.ok(!seen.has(id), `${id} on two pages`);
              seen.add(id);
            }
            url = /^<([^>]+)>; rel="next"$/.exec(String(r.headers.link ?? ''))?.[1];
          }
        }
      }),
      { numRuns: share(0.08), seed: SEED + 3 },
    );
  });

  test(`a wrong value in one field of any body is refused naming that field (${share(0.18)} cases)`, async () => {
    const wrong = fc.oneof(
      ...writers().map(({ valid, wrong, ...route }) =>
        fc.tuple(
          fc.constant(route),
          valid as fc.Arbitrary<Record<string, unknown>>,
          fc.constantFrom(...Object.keys(wrong)).chain((f) => fc.tuple(fc.constant(f), wrong[f] as fc.Arbitrary<unknown>)),
        ),
      ),
    );
    await fc.assert(
      fc.asyncProperty(wrong, async ([w, valid, [field, value]]) => {
        const what = `${w.what} ${field}=${show(value)}`;
        // Category and Serverless-ness are not part of an update: any value of theirs is refused there.
        const body = w.what.startsWith('update') ? { [field]: value } : { ...valid, [field]: value };
        const r = await send(w.method, w.url, { key: w.key, body });
        wellFormed(r, what);
        if (r.status === 413) return; // a huge wrong value may exceed the body limit first
        names(r, `/${field}`, 'body', what);
      }),
      { numRuns: share(0.18), seed: SEED + 4 },
    );
  });

  test(`unknown fields are refused by name, on every writing route (${share(0.04)} cases)`, async () => {
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }).filter((v) => !/__proto__|constructor/.test(JSON.stringify(v))),
      deepNesting,
    );
    await fc.assert(
      fc.asyncProperty(writerWithBody(), unknownField, value, async ([w, valid], key, v) => {
        const r = await send(w.method, w.url, { key: w.key, body: { ...valid, [key]: v } });
        names(r, `/${escapePointer(key)}`, 'body', `${w.what}: unknown ${JSON.stringify(key)}`);
      }),
      { numRuns: share(0.04), seed: SEED + 5 },
    );
  });

  test(`NUL or a lone surrogate in any string or member name of a valid body is refused naming it (${share(0.12)} cases)`, async () => {
    const planted = writerWithBody().chain(([w, valid]) => {
      const places = textPlaces(valid);
      return fc.tuple(fc.constant(w), fc.constant(valid), fc.constantFrom(...places), hostileText);
    });
    await fc.assert(
      fc.asyncProperty(planted, async ([w, valid, place, text]) => {
        const { body, path } = plant(valid, place, text);
        const what = `${w.what} with ${JSON.stringify(text)} at ${place.key ? 'the name of ' : ''}${place.path}`;
        const r = await send(w.method, w.url, { key: w.key, body });
        names(r, path, 'body', what);
      }),
      { numRuns: share(0.12), seed: SEED + 6 },
    );
  });

  test(`any JSON value, deep nesting, truncated JSON or bytes as a body gets a 4xx problem (${share(0.12)} cases)`, async () => {
    const body = fc.oneof(
      fc.json({ maxDepth: 3 }),
      deepNesting.map((d) => d.text),
      deepNesting.map((d) => `{"name":"x","imageName":"ubuntu","env":${d.text}}`),
      validCreate.chain((b) => {
        const text = JSON.stringify(b);
        return fc.integer({ min: 0, max: text.length - 1 }).map((cut) => text.slice(0, cut));
      }),
      fc.string({ unit: 'binary', maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(writer(), body, async (w, text) => {
        const r = await send(w.method, w.url, { key: w.key, body: text, headers: { 'content-type': 'application/json' } });
        wellFormed(r, `${w.what} ${text.slice(0, 100)}`);
        if (r.status === 400 && !isObjectJson(text))
          assert.ok(
            // The whole body, or what was found in it while reading it: a poisonous key ("__proto__"), unacceptable text,
            // or where it grows wider or deeper than any request needs.
            r.body.errors?.some(
              (e: { path: string; in: string; message: string }) =>
                e.in === 'body' &&
                (e.path === '' || /is a key that is not accepted|must not contain|nests deeper than|has more than/.test(e.message)),
            ),
            `the body is named: ${r.text.slice(0, 300)}`,
          );
      }),
      { numRuns: share(0.12), seed: SEED + 7 },
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

  test(`every query parameter of every route: a value it refuses is named, one it takes is served (${share(0.14)} cases)`, async () => {
    const value = fc.oneof(
      fc.constantFrom('true', 'false', 'NVIDIA', 'AMD', 'CPU', '1', '100', '1000', '0', '-1', '1001', '007', '+5'),
      fc.constantFrom('own', 'public', 'platform', 'newest', 'popular', 'Own', 'PUBLIC', 'oldest', 'all'),
      fc.constantFrom('1e400', '-1e400', '1e3', '0x10', ' 5', '5 ', '1.5', '', 'null', 'TRUE', '99999999999999999999', '1,2'),
      fc.integer({ min: 0, max: 2 ** 40 }).map(cursorOf),
      fc.tuple(fc.nat(), fc.integer({ min: 0, max: 2 ** 40 })).map(([runtime, seq]) => popularCursorOf(runtime, seq)),
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      hostileText,
      fc.string({ minLength: 256, maxLength: 300 }),
    );
    // A value of the parameter's own often enough that requests whose every value is taken are common: the rules
    // between parameters (sort, scope, cursor) decide only those.
    const flagValue = fc.constantFrom('true', 'false');
    const takes: Record<string, fc.Arbitrary<string>> = {
      includeEndpointBoundTemplates: flagValue,
      includePublicTemplates: flagValue,
      includePlatformTemplates: flagValue,
      isServerless: flagValue,
      category: fc.constantFrom('NVIDIA', 'AMD', 'CPU'),
      scope: fc.constantFrom('own', 'public', 'platform'),
      sort: fc.constantFrom('newest', 'popular'),
      q: fc.string({ minLength: 1, maxLength: 20 }),
      limit: fc.integer({ min: 1, max: 1000 }).map(String),
      cursor: fc.oneof(
        fc.integer({ min: 0, max: 2 ** 40 }).map(cursorOf),
        fc.tuple(fc.nat(), fc.integer({ min: 0, max: 2 ** 40 })).map(([runtime, seq]) => popularCursorOf(runtime, seq)),
      ),
    };
    const parameter = (names: string[]) =>
      fc
        .oneof(
          { weight: 6, arbitrary: fc.constantFrom(...names) },
          { weight: 1, arbitrary: fc.oneof(fc.string({ minLength: 1, maxLength: 10 }), hostileText) },
        )
        .chain((name) =>
          fc.record({
            name: fc.constant(name),
            value: Object.hasOwn(takes, name)
              ? fc.oneof({ weight: 3, arbitrary: value }, { weight: 2, arbitrary: takes[name] as fc.Arbitrary<string> })
              : value,
            broken: fc.option(badPercentEncoding, { nil: undefined, freq: 8 }),
          }),
        );
    const route = fc.constantFrom(...ROUTES.filter((r) => r.method === 'GET'));
    const request = route.chain((r) =>
      fc.tuple(fc.constant(r), fc.uniqueArray(parameter(r.query ?? ['limit']), { maxLength: 4, selector: (p) => p.name }), fc.boolean()),
    );
    await fc.assert(
      fc.asyncProperty(request, async ([route, parameters, repeat]) => {
        const path = route.path
          .replace(':templateId', own.id)
          .replace(':endpointId', endpoint.id)
          .replace(':containerRegistryAuthId', auth.id)
          .replace(':account', 'alice');
        // The values each parameter of the route's own takes, sent once: what the rules between parameters look at.
        const taken = Object.fromEntries(
          parameters.filter((p) => route.query?.includes(p.name) && QUERY_RULES[p.name]?.(p.value)).map((p) => [p.name, p.value]),
        );
        const pairs = parameters.map((p) => ({ ...p, text: `${percentEncode(p.name)}=${percentEncode(p.value)}${p.broken ?? ''}` }));
        if (repeat && pairs[0]) pairs.push(pairs[0]);
        const url = `${path}${pairs.length ? '?' : ''}${pairs.map((p) => p.text).join('&')}`;
        const refused = new Set(
          parameters
            .filter((p, i) => {
              const rule = route.query?.includes(p.name) ? QUERY_RULES[p.name] : undefined;
              return (
                !rule ||
                p.broken !== undefined ||
                !rule(p.value) ||
                (repeat && i === 0) ||
                refusedTogether(route.path, taken).includes(p.name)
              );
            })
            // A name that can't be decoded is named as it was sent.
            .flatMap((p) => [`/${escapePointer(p.name)}`, `/${escapePointer(percentEncode(p.name))}`]),
        );
        // Registry credentials are read by platform keys alone.
        const r = await send('GET', url, { key: route.path.endsWith('/credentials') ? platform : alice });
        const what = `GET ${url.slice(0, 300)}`;
        wellFormed(r, what);
        if (refused.size === 0) return assert.ok(r.status === 200 || r.status === 404, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
        assert.equal(r.status, 400, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
        for (const e of r.body.errors) {
          assert.equal(e.in, 'query', `${what}: ${JSON.stringify(e)}`);
          // A repeated parameter's values are named one by one (/limit/0).
          const parameter = e.path.replace(/\/[0-9]+$/, '');
          assert.ok(
            refused.has(e.path) || refused.has(parameter),
            `${what}: ${e.path} is named, though its value is fine; refused: ${[...refused]}`,
          );
        }
      }),
      { numRuns: share(0.14), seed: SEED + 8 },
    );
  });

  test(`the list's scope, sort and cursor together: popular only over one catalogue, a cursor only in its own order (${share(0.02)} cases)`, async () => {
    const request = fc.record({
      scope: fc.option(fc.constantFrom('own', 'public', 'platform'), { nil: undefined }),
      sort: fc.option(fc.constantFrom('newest', 'popular'), { nil: undefined }),
      cursor: fc.option(
        fc.oneof(
          fc.integer({ min: 0, max: 2 ** 40 }).map(cursorOf),
          fc.tuple(fc.nat(), fc.integer({ min: 0, max: 2 ** 40 })).map(([runtime, seq]) => popularCursorOf(runtime, seq)),
        ),
        { nil: undefined },
      ),
      flags: fc.subarray(['includeEndpointBoundTemplates', 'includePublicTemplates', 'includePlatformTemplates']),
      limit: fc.integer({ min: 1, max: 50 }),
    });
    await fc.assert(
      fc.asyncProperty(request, async ({ flags, limit, ...chosen }) => {
        const given = Object.fromEntries(Object.entries(chosen).filter(([, v]) => v !== undefined)) as Record<string, string>;
        const query = new URLSearchParams({ ...given, ...Object.fromEntries(flags.map((f) => [f, 'true'])), limit: String(limit) });
        const url = `/v1/templates?${query}`;
        const r = await send('GET', url, { key: alice });
        const what = `GET ${url}`;
        wellFormed(r, what);
        const refused = refusedTogether('/v1/templates', given);
        if (refused.length > 0) {
          assert.equal(r.status, 400, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
          for (const e of r.body.errors)
            assert.ok(e.in === 'query' && refused.includes(e.path.slice(1)), `${what}: ${JSON.stringify(e)} is not one of ${refused}`);
          return;
        }
        assert.equal(r.status, 200, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
        assert.ok(r.body.length <= limit);
        const items: { ownerName: string; isPublic: boolean; isPlatform: boolean; runtimeInMin: number }[] = r.body;
        // Each scope holds what it says; the popular order is by runtime, from where its cursor points on.
        if (chosen.scope === 'own')
          assert.ok(
            items.every((t) => t.ownerName === 'alice'),
            what,
          );
        if (chosen.scope === 'public')
          assert.ok(
            items.every((t) => t.isPublic && !t.isPlatform),
            what,
          );
        if (chosen.scope === 'platform')
          assert.ok(
            items.every((t) => t.isPlatform),
            what,
          );
        if (chosen.sort === 'popular') {
          const from = /^r([0-9]+)\./.exec(Buffer.from(chosen.cursor ?? '', 'base64url').toString('latin1'));
          const runtimes = items.map((t) => t.runtimeInMin);
          assert.ok(
            runtimes.every((n, i) => n <= (i === 0 ? Number(from?.[1] ?? Number.POSITIVE_INFINITY) : (runtimes[i - 1] as number))),
            `${what}: ${runtimes}`,
          );
        }
      }),
      { numRuns: share(0.02), seed: SEED + 12 },
    );
  });

  test(`every path parameter of every route: a bad id is named, however it is encoded (${share(0.1)} cases)`, async () => {
    const badId = ({ rule, longest, good }: ReturnType<typeof pathRule>) =>
      fc
        .oneof(
          fc
            .string({ minLength: 1, maxLength: 80 })
            .filter((s) => !rule.test(s))
            .map(percentEncode),
          fc
            .string({ unit: 'binary', minLength: 1, maxLength: 40 })
            .filter((s) => !rule.test(s))
            .map(percentEncode),
          hostileText.map(percentEncode),
          // No hex digit after the bad encoding: "%" then "30" would be a good one.
          fc.tuple(good, badPercentEncoding, fc.stringMatching(/^[g-z_]{0,4}$/)).map(([a, bad, b]) => `${a.slice(0, 20)}${bad}${b}`),
          fc.integer({ min: longest + 1, max: 400 }).map((n) => 'a'.repeat(n)),
          // Not "." or "..": the injected request's URL is resolved as a browser would, so they never reach the router.
          fc.constantFrom('%00', 'a%00b', '%2F', '%20', '..a', '.a.'),
        )
        .filter((id) => id !== '.' && id !== '..'); // a dot segment drawn by the strings above: resolved away, as said
    const goodId = ({ good }: ReturnType<typeof pathRule>) => fc.oneof(good, fc.constant('own'));
    // Each parameter's cases made once, not per case: building a string arbitrary from a regular expression costs.
    const parameter = new Map(
      Object.keys({ ...PATH_RULES, templateId: 0, endpointId: 0, releaseId: 0, containerRegistryAuthId: 0, keyId: 0 }).map((p) => [
        p,
        fc.tuple(fc.constant(p), fc.option(badId(pathRule(p)), { nil: undefined, freq: 2 }), goodId(pathRule(p))),
      ]),
    );
    const request = fc.oneof(
      ...ROUTES.filter((r) => r.path.includes(':')).map((r) => {
        const params = [...r.path.matchAll(/:(\w+)/g)].map(
          (m) => parameter.get(m[1] as string) as fc.Arbitrary<[string, string | undefined, string]>,
        );
        return fc.tuple(fc.constant(r), fc.tuple(...params));
      }),
    );
    await fc.assert(
      fc.asyncProperty(request, async ([route, params]) => {
        let url = route.path;
        const bad: string[] = [];
        for (const [name, broken, good] of params) {
          const real = {
            templateId: own.id,
            endpointId: endpoint.id,
            releaseId: release.id,
            containerRegistryAuthId: auth.id,
            name: SECRET,
            account: 'alice',
            keyId: 'key_0123456789abcdef',
          }[name] as string;
          // The fuzzer's own template, endpoint and secret are not deleted: the cases after this one use them.
          const mine = good === 'own' && route.method !== 'DELETE';
          url = url.replace(`:${name}`, broken ?? (mine ? real : good === 'own' ? 'nosuchthing' : good));
          if (broken !== undefined) bad.push(`/${name}`);
        }
        const r = await send(route.method, url, {
          key: alice,
          body: route.method === 'POST' || route.method === 'PATCH' || route.method === 'PUT' ? '{}' : undefined,
        });
        const what = `${route.method} ${url.slice(0, 200)}`;
        wellFormed(r, what);
        if (bad.length === 0) return;
        assert.equal(r.status, 400, `${what} → ${r.status} ${r.text.slice(0, 300)}`);
        assert.ok(
          r.body.errors.some((e: { in: string; path: string }) => e.in === 'path' && bad.includes(e.path)),
          `${what}: ${JSON.stringify(r.body.errors).slice(0, 300)} names ${bad}`,
        );
      }),
      { numRuns: share(0.1), seed: SEED + 9 },
    );
  });

  test(`junk in the headers we read (Authorization, If-Match, Idempotency-Key, Content-Type) gets a 4xx problem naming it (${share(0.07)} cases)`, async () => {
    // Header values are bytes: anything from \x00 to \xff but line breaks, which no client can send in one.
    const junk = (maxLength: number) =>
      fc.string({
        unit: fc
          .integer({ min: 0, max: 0xff })
          .filter((c) => c !== 10 && c !== 13)
          .map((c) => String.fromCharCode(c)),
        maxLength,
      });
    const request = fc.oneof(
      junk(100).map((v) => ({ kind: 'authorization' as const, value: v })),
      junk(20).map((v) => ({ kind: 'authorization' as const, value: `Bearer pp_${v}` })),
      fc.tuple(junk(3), junk(3)).map(([a, b]) => ({ kind: 'own-key' as const, before: a, after: b })),
      fc
        .tuple(
          fc.constantFrom('PATCH', 'DELETE', 'POST'),
          fc.oneof(junk(60), fc.constantFrom('"r1"', '*', 'W/"r1"', '"r1", "r2"', '"r1"\u0000', '"r\u00001"')),
        )
        .map(([method, v]) => ({ kind: 'if-match' as const, method, value: v })),
      fc
        .tuple(fc.constantFrom('/v1/templates', 'rollback'), fc.oneof(junk(300), fc.constantFrom('key\u0000', '\u0000')))
        .map(([route, v]) => ({
          kind: 'idempotency-key' as const,
          route,
          value: v,
        })),
      junk(60).map((v) => ({ kind: 'content-type' as const, value: v })),
    );
    await fc.assert(
      fc.asyncProperty(request, async (c) => {
        const what = JSON.stringify(c);
        if (c.kind === 'authorization' || c.kind === 'own-key') {
          const value = c.kind === 'authorization' ? c.value : `${c.before}Bearer ${alice}${c.after}`;
          const r = await send('GET', '/v1/templates', { headers: { authorization: value } });
          wellFormed(r, what);
          const exact = new RegExp(`^Bearer +${alice}$`, 'i').test(value);
          assert.equal(r.status, exact ? 200 : 401, `${what} → ${r.status}`);
          if (r.status === 401) assert.equal(r.headers['www-authenticate'], 'Bearer realm="podplate"');
        } else if (c.kind === 'if-match') {
          const url =
            c.method === 'DELETE'
              ? '/v1/templates/nosuchtemplate'
              : c.method === 'PATCH'
                ? `/v1/templates/${own.id}`
                : `/v1/templates/${own.id}/rollback`;
          const body = c.method === 'PATCH' ? '{}' : c.method === 'POST' ? '{"revision":1}' : undefined;
          const r = await send(c.method, url, { key: alice, body, headers: { 'if-match': c.value } });
          wellFormed(r, what);
          // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what no entity tag holds
          if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(c.value)) names(r, '/if-match', 'header', what);
          else if (r.status === 400) names(r, '/if-match', 'header', what);
          else assert.ok([200, 204, 404, 412].includes(r.status), `${what} → ${r.status} ${r.text.slice(0, 200)}`);
        } else if (c.kind === 'idempotency-key') {
          const [url, body] =
            c.route === 'rollback'
              ? [`/v1/templates/${own.id}/rollback`, { revision: 1 }]
              : ['/v1/templates', { name: unique('idempotent'), imageName: 'ubuntu' }];
          const r = await send('POST', url, { key: alice, body, headers: { 'idempotency-key': c.value } });
          wellFormed(r, what);
          if (/^[\x20-\x7e]{1,255}$/.test(c.value))
            assert.ok([200, 422].includes(r.status), `${what} → ${r.status} ${r.text.slice(0, 200)}`);
          else names(r, '/idempotency-key', 'header', what);
        } else {
          const r = await send('POST', '/v1/templates', {
            key: alice,
            body: { name: unique('typed'), imageName: 'ubuntu' },
            headers: { 'content-type': c.value },
          });
          wellFormed(r, what);
          if (r.status === 415)
            assert.deepEqual(r.body.errors, [{ in: 'header', path: '/content-type', message: 'must be application/json' }]);
          else assert.ok([200, 400].includes(r.status), `${what} → ${r.status}`);
        }
      }),
      { numRuns: share(0.07), seed: SEED + 10 },
    );
  });

  test(`routes outside /v1 (health, metrics, the OpenAPI document, /docs, UI assets) answer any path and query below 500 (${share(0.02)} cases)`, async () => {
    const request = fc.tuple(
      fc.constantFrom('/healthz', '/readyz', '/metrics', '/v1/openapi.json', '/docs', '/docs/json', '/docs/static/', '/assets/'),
      fc.oneof(fc.constant(''), fc.string({ maxLength: 30 }).map(percentEncode), hostileText.map(percentEncode), badPercentEncoding),
      fc.oneof(
        fc.constant(''),
        fc.string({ maxLength: 30 }).map((q) => `?${percentEncode(q)}`),
        badPercentEncoding.map((b) => `?x=${b}`),
      ),
    );
    await fc.assert(
      fc.asyncProperty(request, async ([path, tail, query]) => {
        const url = `${path}${path.endsWith('/') ? tail : ''}${query}`;
        wellFormed(await send('GET', url), `GET ${url}`);
      }),
      { numRuns: share(0.02), seed: SEED + 11 },
    );
  });
});
