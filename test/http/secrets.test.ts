import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, registryAuth, startHarness, templateBody } from '../support/harness.ts';

// Secrets: each account's own, set, listed (never their values) and deleted; references to them in a template's env,
// resolved for the account that launches it (platform keys only), with the 422 naming every secret it lacks.

const UNRESOLVABLE = 'https://podplate.dev/problems/unresolvable-template';

forEachDialect('secrets', (dialect) => {
  let h: Harness;
  let alice: string;
  let bob: string;
  let platform: string;
  before(async () => {
    h = await startHarness(dialect, { quotas: { templates: 0, bytes: 0, endpoints: 0, registryAuths: 0, secrets: 5 } });
    alice = await h.key('alice');
    bob = await h.key('bob');
    platform = await h.key('ops', 'platform');
  });
  after(() => h.close());

  const put = (name: string, value: unknown, key = alice) => h.call('PUT', `/v1/secrets/${name}`, { key, body: { value } });
  const template = async (overrides: Record<string, unknown>, key = alice) => {
    const r = await h.call('POST', '/v1/templates', { key, body: templateBody(overrides) });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };
  const resolve = (id: string, account: string, key = platform) =>
    h.call('POST', `/v1/templates/${id}/resolve`, { key, body: { account } });

  test('PUT creates (201, Location) then replaces (200); the list shows names and times, never a value', async () => {
    const created = await put('HF_TOKEN', 'value-of-alice-1');
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers.location, '/v1/secrets/HF_TOKEN');
    assert.deepEqual(Object.keys(created.body), ['name', 'createdAt', 'updatedAt']);
    assert.equal(created.body.name, 'HF_TOKEN');
    const replaced = await put('HF_TOKEN', 'value-of-alice-2');
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.createdAt, created.body.createdAt);
    assert.ok(Date.parse(replaced.body.updatedAt) >= Date.parse(created.body.updatedAt));
    const listed = await h.call('GET', '/v1/secrets', { key: alice });
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.map((s: { name: string }) => s.name),
      ['HF_TOKEN'],
    );
    for (const text of [created.text, replaced.text, listed.text]) assert.doesNotMatch(text, /value-of-alice/);
  });

  test("secrets are each account's own: Bob sees none of Alice's, and his delete of her name is a 404", async () => {
    await put('ALICE_ONLY', 'alice-private-value');
    const bobs = await h.call('GET', '/v1/secrets', { key: bob });
    assert.deepEqual(bobs.body, []);
    const r = await h.call('DELETE', '/v1/secrets/ALICE_ONLY', { key: bob });
    assert.equal(r.status, 404);
    assert.equal((await h.call('DELETE', '/v1/secrets/ALICE_ONLY', { key: alice })).status, 204);
    assert.equal((await h.call('DELETE', '/v1/secrets/ALICE_ONLY', { key: alice })).status, 404);
  });

  const bad: [string, unknown, string][] = [
    ['1ABC', 'v', '/name'],
    [`A${'B'.repeat(128)}`, 'v', '/name'],
    ['has-dash', 'v', '/name'],
    [`A${'B'.repeat(255)}`, 'v', '/name'],
    ['OK_NAME', '', '/value'],
    ['OK_NAME', 'x'.repeat(32769), '/value'],
    ['OK_NAME', '😀'.repeat(32769), '/value'],
    ['OK_NAME', 42, '/value'],
  ];
  for (const [name, value, path] of bad) {
    test(`PUT ${name.slice(0, 20)} with ${JSON.stringify(value).slice(0, 20)} is a 400 naming ${path}`, async () => {
      const r = await put(name, value);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.errors[0].path, path);
      assert.equal(r.body.errors[0].in, path === '/name' ? 'path' : 'body');
    });
  }

  test('a value of 32 KiB and a name of 128 characters are accepted', async () => {
    const long = `A${'b'.repeat(127)}`;
    assert.equal((await put(long, 'v')).status, 201);
    assert.equal((await h.call('DELETE', `/v1/secrets/${long}`, { key: alice })).status, 204);
    assert.equal((await put('BIG', 'x'.repeat(32768))).status, 201);
    assert.equal((await h.call('DELETE', '/v1/secrets/BIG', { key: alice })).status, 204);
  });

  test('the number of secrets per account is bounded (QUOTA_SECRETS_PER_ACCOUNT); replacing one is not refused', async () => {
    const carol = await h.key('carol');
    for (let i = 0; i < 5; i++) assert.equal((await put(`S${i}`, 'v', carol)).status, 201);
    const r = await put('S5', 'v', carol);
    assert.equal(r.status, 403, r.text);
    assert.equal(r.body.type, 'https://podplate.dev/problems/quota-exceeded');
    assert.deepEqual(r.body.quota, { name: 'QUOTA_SECRETS_PER_ACCOUNT', limit: 5, used: 5 });
    assert.equal((await put('S0', 'again', carol)).status, 200);
  });

  test('references are stored and shown as written', async () => {
    const env = { HF_TOKEN: '{{ secret.HF_TOKEN }}', URL: 'https://u:{{secret.PASS}}@host/x', JINJA: '{{ name }}' };
    const t = await template({ env, isPublic: true });
    assert.deepEqual(t.env, env);
    assert.deepEqual((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.env, env);
  });

  const malformed = ['{{ secret.has-dash }}', '{{ secret. }}', '{{ secret.1A }}', 'x {{ secret.OPEN', '{{secret.A B}}'];
  for (const value of malformed) {
    test(`a malformed reference ${JSON.stringify(value)} is a 400 naming the env key, on create and update`, async () => {
      const r = await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ env: { MY_KEY: value, OK: 'fine' } }) });
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(
        r.body.errors.map((e: { path: string }) => e.path),
        ['/env/MY_KEY'],
      );
      const t = await template({});
      const u = await h.call('PATCH', `/v1/templates/${t.id}`, { key: alice, body: { env: { MY_KEY: value } } });
      assert.equal(u.status, 400, u.text);
      assert.equal(u.body.errors[0].path, '/env/MY_KEY');
    });
  }

  test("a public template resolves with the launching account's secrets, not the owner's", async () => {
    await put('HF_TOKEN', 'hf-value-of-alice');
    await put('HF_TOKEN', 'hf-value-of-bob', bob);
    await put('PASS', 'bob-pass', bob);
    const t = await template({
      isPublic: true,
      env: { HF_TOKEN: '{{ secret.HF_TOKEN }}', URL: 'https://u:{{secret.PASS}}@h/{{ x }}', PLAIN: 'p' },
    });
    const forBob = await resolve(t.id, 'bob');
    assert.equal(forBob.status, 200, forBob.text);
    assert.equal(forBob.headers['cache-control'], 'no-store');
    assert.deepEqual(forBob.body.template.env, { HF_TOKEN: 'hf-value-of-bob', URL: 'https://u:bob-pass@h/{{ x }}', PLAIN: 'p' });
    assert.equal(forBob.body.template.id, t.id);
    assert.equal(forBob.body.template.name, t.name);
    assert.equal(forBob.body.containerRegistryCredentials, null);
    // Alice lacks PASS: the 422 lists it, and every other missing name.
    const forAlice = await resolve(t.id, 'alice');
    assert.equal(forAlice.status, 422, forAlice.text);
    assert.equal(forAlice.body.type, UNRESOLVABLE);
    assert.deepEqual(forAlice.body.missingSecrets, ['PASS']);
    await h.key('dave');
    const forDave = await resolve(t.id, 'dave');
    assert.equal(forDave.status, 422);
    assert.deepEqual(forDave.body.missingSecrets, ['HF_TOKEN', 'PASS']);
    assert.doesNotMatch(forDave.text, /hf-value|bob-pass/);
    // The template itself still holds the references.
    assert.deepEqual((await h.call('GET', `/v1/templates/${t.id}`, { key: alice })).body.env.HF_TOKEN, '{{ secret.HF_TOKEN }}');
  });

  test('registry credentials come with the resolve only when the launching account owns the template', async () => {
    const authId = await registryAuth(h, alice);
    await put('HF_TOKEN', 'hf-value-of-alice');
    const t = await template({ isPublic: true, containerRegistryAuthId: authId, env: { T: '{{ secret.HF_TOKEN }}' } });
    const own = await resolve(t.id, 'alice');
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.body.containerRegistryCredentials, { username: 'user', password: 'password' });
    assert.equal(own.body.template.env.T, 'hf-value-of-alice');
    const other = await resolve(t.id, 'bob');
    assert.equal(other.status, 200, other.text);
    assert.equal(other.body.containerRegistryCredentials, null);
    assert.equal(other.body.template.env.T, 'hf-value-of-bob');
  });

  test("another account's private template is a 404 for the launcher; user keys are refused; an unknown account is a 400", async () => {
    const t = await template({ isPublic: false, env: {} });
    assert.equal((await resolve(t.id, 'alice')).status, 200);
    const r = await resolve(t.id, 'bob');
    assert.equal(r.status, 404, r.text);
    assert.equal((await resolve('nosuchtemplate', 'alice')).status, 404);
    const user = await resolve(t.id, 'alice', alice);
    assert.equal(user.status, 403);
    const unknown = await resolve(t.id, 'nobody-here');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.errors[0].path, '/account');
    const missing = await h.call('POST', `/v1/templates/${t.id}/resolve`, { key: platform, body: {} });
    assert.equal(missing.status, 400);
  });

  test('a resolve that would make more than 1 MiB of env is refused (422), not built', async () => {
    await put('BIG', 'x'.repeat(32768), await h.key('erin'));
    const env = { A: '{{ secret.BIG }}'.repeat(40) };
    const t = await template({ isPublic: true, env });
    const r = await resolve(t.id, 'erin');
    assert.equal(r.status, 422, r.text.slice(0, 200));
    assert.equal(r.body.type, UNRESOLVABLE);
  });

  test('a template referring to 66,000 secrets, more than one query may name, resolves: the 422 lists each one the launcher lacks', async () => {
    // A resolve had looked them all up in one query: past SQLite's 32,766 bound values, or PostgreSQL's 65,535, a 500.
    const heidi = await h.key('heidi');
    const first = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_';
    const rest = `${first}0123456789`;
    const names = Array.from(
      { length: 66_000 },
      (_, i) => `${first[Math.floor(i / 63 ** 2)]}${rest[Math.floor(i / 63) % 63]}${rest[i % 63]}`,
    );
    // The two Heidi has are the last referred to, so that they are found past the first names looked up.
    const [had1, had2] = names.slice(-2) as [string, string];
    assert.equal((await put(had1, 'one', heidi)).status, 201);
    assert.equal((await put(had2, 'two', heidi)).status, 201);
    const env: Record<string, string> = {};
    for (let k = 0; k * 300 < names.length; k++)
      env[`K${k}`] = names
        .slice(k * 300, (k + 1) * 300)
        .map((n) => `{{secret.${n}}}`)
        .join('');
    const t = await template({ env }, heidi);
    const r = await resolve(t.id, 'heidi');
    assert.equal(r.status, 422, r.text.slice(0, 300));
    assert.deepEqual(r.body.missingSecrets, names.slice(0, -2));
    // With the references to what she lacks gone, it resolves.
    const u = await h.call('PATCH', `/v1/templates/${t.id}`, {
      key: heidi,
      body: { env: { A: `{{secret.${had1}}}`, B: `{{ secret.${had2} }}/{{secret.${had1}}}` } },
    });
    assert.equal(u.status, 200, u.text.slice(0, 300));
    const resolved = await resolve(t.id, 'heidi');
    assert.equal(resolved.status, 200, resolved.text.slice(0, 300));
    assert.deepEqual(resolved.body.template.env, { A: 'one', B: 'two/one' });
  });

  test('a resolve may pin the revision the user saw: a public template changed since is a 412, not resolved', async () => {
    const grace = await h.key('grace');
    assert.equal((await put('HF_TOKEN', 'grace-hf', grace)).status, 201);
    assert.equal((await put('AWS_SECRET_ACCESS_KEY', 'grace-aws', grace)).status, 201);
    const t = await template({ isPublic: true, env: { HF_TOKEN: '{{ secret.HF_TOKEN }}' } }, bob);
    const seen = await h.call('POST', `/v1/templates/${t.id}/resolve`, { key: platform, body: { account: 'grace', revision: 1 } });
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(seen.body.template.env, { HF_TOKEN: 'grace-hf' });
    // Bob changes his template between Grace's look and her launch: the launch must not get what she never saw.
    const changed = await h.call('PATCH', `/v1/templates/${t.id}`, {
      key: bob,
      body: { env: { HF_TOKEN: '{{ secret.HF_TOKEN }}', CACHE: '{{ secret.AWS_SECRET_ACCESS_KEY }}' } },
    });
    assert.equal(changed.status, 200, changed.text);
    const r = await h.call('POST', `/v1/templates/${t.id}/resolve`, { key: platform, body: { account: 'grace', revision: 1 } });
    assert.equal(r.status, 412, r.text);
    assert.doesNotMatch(r.text, /grace-aws|grace-hf/);
  });

  test('the 1 MiB bound counts the text around the references too: literal text after the last one is no way past it', async () => {
    const frank = await h.key('frank');
    assert.equal((await put('BIG', 'y'.repeat(32768), frank)).status, 201);
    // 20 values of a reference then 32,000 bytes of text: about 640 KB as written, about 1.3 MB resolved.
    const env = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`V${i}`, `{{ secret.BIG }}${'t'.repeat(32000)}`]));
    const t = await template({ isPublic: true, env }, frank);
    const r = await resolve(t.id, 'frank');
    assert.equal(r.status, 422, `${r.status} ${r.text.length} bytes`);
    assert.equal(r.body.type, UNRESOLVABLE);
  });
});
