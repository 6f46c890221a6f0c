import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// Tenant isolation: seven accounts (two of them platform keys) with random templates; every account asks for every id and for the list with
// all eight flag sets, and tries to change and delete every template of the others. The oracle is written from
// the visibility table of docs/api.md, apart from the service's own code.

interface Account {
  name: string;
  role: 'user' | 'platform';
  key: string;
}
interface Seeded {
  id: string;
  owner: string;
  isPublic: boolean;
  official: boolean;
  bound: boolean;
  body: unknown;
}
type Flags = [bound: boolean, pub: boolean, platform: boolean];

function seen(caller: Account, t: Seeded, [bound, pub, platform]: Flags): boolean {
  if (t.bound && !bound) return false;
  if (t.owner === caller.name) return true;
  // A private official template is the platform's alone.
  if (t.official) return (platform || caller.role === 'platform') && (t.isPublic || caller.role === 'platform');
  return t.isPublic && pub;
}
const visibleAtAll = (caller: Account, t: Seeded) =>
  t.owner === caller.name || (t.official && (t.isPublic || caller.role === 'platform')) || (!t.official && t.isPublic);
const FLAGS: Flags[] = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => [(n & 1) !== 0, (n & 2) !== 0, (n & 4) !== 0]);
const query = ([bound, pub, platform]: Flags) =>
  `includeEndpointBoundTemplates=${bound}&includePublicTemplates=${pub}&includePlatformTemplates=${platform}`;

const SEED = Number(process.env.ISOLATION_SEED ?? 20261122);
const shapes = fc.sample(
  fc.array(fc.record({ isPublic: fc.boolean(), isServerless: fc.boolean(), bind: fc.boolean() }), { minLength: 3, maxLength: 6 }),
  { numRuns: 7, seed: SEED },
);

forEachDialect('tenant isolation', (dialect) => {
  let h: Harness;
  const accounts: Account[] = [];
  const templates: Seeded[] = [];

  before(async () => {
    h = await startHarness(dialect);
    const names: [string, 'user' | 'platform'][] = [
      ['ana', 'user'],
      ['ben', 'user'],
      ['cai', 'user'],
      ['dee', 'user'],
      ['eli', 'user'],
      ['ops', 'platform'],
      ['sys', 'platform'],
    ];
    for (const [i, [name, role]] of names.entries()) {
      const account = { name, role, key: await h.key(name, role) };
      accounts.push(account);
      for (const shape of shapes[i] ?? []) {
        const r = await h.call('POST', '/v1/templates', {
          key: account.key,
          body: templateBody({ isPublic: shape.isPublic, isServerless: shape.isServerless }),
        });
        assert.equal(r.status, 200);
        const bound = shape.isServerless && shape.bind;
        if (bound)
          assert.equal(
            (await h.call('POST', '/v1/endpoints', { key: account.key, body: { name: `e-${r.body.id}`, templateId: r.body.id } })).status,
            200,
          );
        templates.push({ id: r.body.id, owner: name, isPublic: shape.isPublic, official: role === 'platform', bound, body: r.body });
      }
    }
    assert.ok(
      templates.some((t) => t.bound) &&
        templates.some((t) => t.isPublic) &&
        templates.some((t) => !t.isPublic) &&
        templates.some((t) => t.official && !t.isPublic) &&
        templates.some((t) => t.official && t.isPublic),
      `seed ${SEED} covers the table`,
    );
  });
  after(() => h.close());

  test('every account asks for every id with every flag set: exactly the oracle', async () => {
    let wrong = 0;
    for (const caller of accounts) {
      for (const flags of FLAGS) {
        for (const t of templates) {
          const r = await h.call('GET', `/v1/templates/${t.id}?${query(flags)}`, { key: caller.key });
          const expected = seen(caller, t, flags) ? 200 : 404;
          if (r.status !== expected) wrong++;
          assert.equal(r.status, expected, `${caller.name} ${query(flags)} ${JSON.stringify({ ...t, body: undefined })}`);
          if (expected === 200) assert.deepEqual(r.body, t.body);
        }
      }
    }
    assert.equal(wrong, 0);
  });

  test('every account lists with every flag set: exactly the oracle, across pages', async () => {
    for (const caller of accounts) {
      for (const flags of FLAGS) {
        const ids: string[] = [];
        let url: string | undefined = `/v1/templates?${query(flags)}&limit=3`;
        while (url) {
          const r = await h.call('GET', url, { key: caller.key });
          assert.equal(r.status, 200);
          ids.push(...r.body.map((x: { id: string }) => x.id));
          url = /^<([^>]+)>; rel="next"$/.exec(String(r.headers.link ?? ''))?.[1];
        }
        const expected = templates
          .filter((t) => seen(caller, t, flags))
          .map((t) => t.id)
          .reverse();
        assert.deepEqual(ids, expected, `${caller.name} ${query(flags)}`);
      }
    }
  });

  test("no account can change, roll back, read the history of, or delete another's template", async () => {
    for (const caller of accounts) {
      for (const t of templates.filter((x) => x.owner !== caller.name)) {
        const expected = visibleAtAll(caller, t) ? 403 : 404;
        const attempts = [
          await h.call('PATCH', `/v1/templates/${t.id}`, { key: caller.key, body: { readme: 'taken over' } }),
          await h.call('POST', `/v1/templates/${t.id}/update`, { key: caller.key, body: { isPublic: true } }),
          await h.call('POST', `/v1/templates/${t.id}/rollback`, { key: caller.key, body: { revision: 1 } }),
          await h.call('GET', `/v1/templates/${t.id}/revisions`, { key: caller.key }),
          await h.call('DELETE', `/v1/templates/${t.id}`, { key: caller.key }),
        ];
        assert.deepEqual(
          attempts.map((r) => r.status),
          Array(5).fill(expected),
          `${caller.name} on ${t.owner}'s ${t.id}`,
        );
      }
    }
    for (const t of templates) {
      const owner = accounts.find((a) => a.name === t.owner) as Account;
      const r = await h.call('GET', `/v1/templates/${t.id}?includeEndpointBoundTemplates=true`, { key: owner.key });
      assert.deepEqual(r.body, t.body, 'unchanged');
    }
  });

  test("a 404 for another's private template is the same as for no template at all", async () => {
    const [caller] = accounts as [Account];
    const hidden = templates.find((t) => t.owner !== caller.name && !visibleAtAll(caller, t));
    assert.ok(hidden);
    const a = await h.call('GET', `/v1/templates/${hidden.id}`, { key: caller.key });
    const b = await h.call('GET', '/v1/templates/nosuchtemplate0', { key: caller.key });
    assert.deepEqual([a.status, a.body], [b.status, b.body]);
  });
});
