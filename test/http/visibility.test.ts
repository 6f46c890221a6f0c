import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// docs/api.md, "What a caller sees", as an oracle written from the table itself.
interface Seeded {
  id: string;
  owner: string;
  isPublic: boolean;
  official: boolean;
  bound: boolean;
}
interface Flags {
  includeEndpointBoundTemplates: boolean;
  includePublicTemplates: boolean;
  includePlatformTemplates: boolean;
}
interface Account {
  name: string;
  role: 'user' | 'platform';
  key: string;
}

function oracle(caller: Account, t: Seeded, f: Flags): boolean {
  if (t.bound && !f.includeEndpointBoundTemplates) return false; // bound templates only with the flag
  if (t.owner === caller.name) return true; // the caller's own
  if (t.official && !t.isPublic) return caller.role === 'platform'; // a private official template: platform keys only
  if (t.official) return f.includePlatformTemplates || caller.role === 'platform'; // official
  if (t.isPublic) return f.includePublicTemplates; // another account's public template
  return false; // another account's private template: never
}

const FLAG_SETS: Flags[] = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => ({
  includeEndpointBoundTemplates: (n & 1) !== 0,
  includePublicTemplates: (n & 2) !== 0,
  includePlatformTemplates: (n & 4) !== 0,
}));
const query = (f: Flags) => new URLSearchParams(Object.entries(f).map(([k, v]) => [k, String(v)])).toString();

forEachDialect('visibility', (dialect) => {
  let h: Harness;
  const accounts: Account[] = [];
  const seeded: Seeded[] = [];

  before(async () => {
    h = await startHarness(dialect);
    for (const [name, role] of [
      ['alice', 'user'],
      ['bob', 'user'],
      ['carol', 'user'],
      ['platform', 'platform'],
      ['ops', 'platform'],
    ] as const) {
      accounts.push({ name, role, key: await h.key(name, role) });
    }
    for (const owner of accounts.filter((a) => a.name !== 'carol' && a.name !== 'ops')) {
      for (const isPublic of [false, true]) {
        for (const bound of [false, true]) {
          const r = await h.call('POST', '/v1/templates', { key: owner.key, body: templateBody({ isPublic, isServerless: bound }) });
          assert.equal(r.status, 200);
          if (bound) {
            const e = await h.call('POST', '/v1/endpoints', { key: owner.key, body: { name: `ep ${r.body.id}`, templateId: r.body.id } });
            assert.equal(e.status, 200, e.text);
          }
          seeded.push({ id: r.body.id, owner: owner.name, isPublic, official: owner.role === 'platform', bound });
        }
      }
    }
  });
  after(() => h.close());

  test("GET by id answers 200 exactly where the table says, 404 elsewhere, naming the flag for the owner's bound template (5 accounts x 12 templates x 8 flag sets)", async () => {
    let checked = 0;
    for (const caller of accounts) {
      for (const flags of FLAG_SETS) {
        for (const t of seeded) {
          const r = await h.call('GET', `/v1/templates/${t.id}?${query(flags)}`, { key: caller.key });
          const seen = oracle(caller, t, flags);
          assert.equal(r.status, seen ? 200 : 404, `${caller.name} ${query(flags)} ${JSON.stringify(t)}`);
          if (seen) assert.equal(r.body.id, t.id);
          // The owner's bound template is hidden by the flag alone: the answer says so, and which flag shows it.
          else if (t.bound && t.owner === caller.name)
            assert.equal(
              r.body.detail,
              'This template of yours runs on an endpoint, and such templates are shown only with includeEndpointBoundTemplates=true.',
            );
          else assert.equal(r.body.detail, 'No template with that id is visible to this key.');
          checked++;
        }
      }
    }
    assert.equal(checked, 5 * 8 * 12);
  });

  test('the list holds exactly the visible templates, for every account and flag set', async () => {
    for (const caller of accounts) {
      for (const flags of FLAG_SETS) {
        const r = await h.call('GET', `/v1/templates?${query(flags)}&limit=1000`, { key: caller.key });
        assert.equal(r.status, 200);
        const expected = seeded
          .filter((t) => oracle(caller, t, flags))
          .map((t) => t.id)
          .sort();
        assert.deepEqual(r.body.map((t: { id: string }) => t.id).sort(), expected, `${caller.name} ${query(flags)}`);
      }
    }
  });

  test('flags accept only true and false', async () => {
    const [caller] = accounts as [Account];
    for (const bad of ['1', 'yes', 'TRUE', '', 'true,false']) {
      for (const url of [`/v1/templates?includePublicTemplates=${bad}`, `/v1/templates/${seeded[0]?.id}?includePlatformTemplates=${bad}`]) {
        const r = await h.call('GET', url, { key: caller.key });
        assert.equal(r.status, 400, `${url}: ${r.text}`);
        assert.equal(r.body.errors[0].in, 'query');
      }
    }
    const repeated = await h.call('GET', '/v1/templates?includePublicTemplates=true&includePublicTemplates=false', { key: caller.key });
    assert.equal(repeated.status, 400);
    const unknown = await h.call('GET', '/v1/templates?includeEverything=true', { key: caller.key });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].path, '/includeEverything');
  });
});
