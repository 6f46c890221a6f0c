import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';
import { EMBEDDED, LOOK_ALIKES, TOKENS } from '../support/tokens.ts';

// A public template is readable by everyone: creating one, updating one, or making one public with a literal token of
// a well-known format in its env is a 400 naming the env key and saying to use a secret reference. Private templates
// are not scanned, and ordinary values that merely look alike pass.

forEachDialect('secret scanning of public templates', (dialect) => {
  let h: Harness;
  let alice: string;
  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
  });
  after(() => h.close());

  const create = (overrides: Record<string, unknown>) => h.call('POST', '/v1/templates', { key: alice, body: templateBody(overrides) });
  const patch = (id: string, body: unknown) => h.call('PATCH', `/v1/templates/${id}`, { key: alice, body });
  const assertRefused = (r: { status: number; body: any; text: string }, key: string) => {
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.type, 'https://podplate.dev/problems/invalid-request');
    assert.deepEqual(
      r.body.errors.map((e: { path: string }) => e.path),
      [`/env/${key}`],
    );
    assert.match(r.body.errors[0].message, new RegExp(`\\{\\{ secret\\.${key} \\}\\}`));
    assert.match(r.body.detail, /secret/);
  };

  for (const [what, token] of Object.entries({ ...TOKENS, ...EMBEDDED })) {
    test(`${what}: refused on a public create, a public update and making one public; a private template keeps it`, async () => {
      assertRefused(await create({ isPublic: true, env: { SAFE: 'x', MY_TOKEN: token } }), 'MY_TOKEN');

      const open = await create({ isPublic: true, env: { SAFE: 'x' } });
      assert.equal(open.status, 200, open.text);
      assertRefused(await patch(open.body.id, { env: { MY_TOKEN: token } }), 'MY_TOKEN');

      const closed = await create({ isPublic: false, env: { MY_TOKEN: token } });
      assert.equal(closed.status, 200, closed.text);
      assert.equal(closed.body.env.MY_TOKEN, token);
      assert.equal((await patch(closed.body.id, { readme: 'private: not scanned' })).status, 200);
      assertRefused(await patch(closed.body.id, { isPublic: true }), 'MY_TOKEN');
      assertRefused(await h.call('POST', `/v1/templates/${closed.body.id}/update`, { key: alice, body: { isPublic: true } }), 'MY_TOKEN');
      // Nothing was written by the refused changes.
      const got = await h.call('GET', `/v1/templates/${closed.body.id}`, { key: alice });
      assert.equal(got.body.isPublic, false);
      assert.equal(got.body.revision, 2);
    });
  }

  test('a rollback to a private revision that holds a token is allowed: private templates are not scanned', async () => {
    const t = await create({ isPublic: false, env: { K: TOKENS['Hugging Face'] } });
    assert.equal((await patch(t.body.id, { env: { K: '{{ secret.K }}' }, isPublic: true })).status, 200);
    assert.equal((await patch(t.body.id, { readme: 'r3' })).status, 200);
    const r = await h.call('POST', `/v1/templates/${t.body.id}/rollback`, { key: alice, body: { revision: 1 } });
    // Revision 1 was private: rolling back makes it private again, which is not scanned.
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.isPublic, false);
  });

  test('look-alikes of tokens pass in a public template', async () => {
    const env = Object.fromEntries(LOOK_ALIKES.map((v, i) => [`V${i}`, v]));
    const r = await create({ isPublic: true, env });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.env, env);
  });

  test('a token in the start command or the entrypoint of a public template is refused, naming the element', async () => {
    const token = TOKENS['Hugging Face'];
    for (const field of ['dockerStartCmd', 'dockerEntrypoint']) {
      const r = await create({ isPublic: true, [field]: ['huggingface-cli', `--token=${token}`] });
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(
        r.body.errors.map((e: { path: string }) => e.path),
        [`/${field}/1`],
      );
      assert.match(r.body.errors[0].message, /\$HF_TOKEN|secret/);
      const closed = await create({ isPublic: false, [field]: [`--token=${token}`] });
      assert.equal(closed.status, 200, closed.text);
      assert.equal((await patch(closed.body.id, { isPublic: true })).status, 400);
    }
    const fine = await create({ isPublic: true, dockerStartCmd: ['bash', '-c', 'huggingface-cli login --token "$HF_TOKEN"'] });
    assert.equal(fine.status, 200, fine.text);
  });

  test('a PGP private key block is refused in a public env', async () => {
    const key = `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGXq${'A1b2'.repeat(20)}\n-----END PGP PRIVATE KEY BLOCK-----\n`;
    assertRefused(await create({ isPublic: true, env: { GPG_KEY: key } }), 'GPG_KEY');
  });

  test('every offending key is named at once', async () => {
    const r = await create({ isPublic: true, env: { A: TOKENS['AWS access key id'], B: 'fine', C: TOKENS['Slack bot'] } });
    assert.equal(r.status, 400);
    assert.deepEqual(
      r.body.errors.map((e: { path: string }) => e.path),
      ['/env/A', '/env/C'],
    );
  });
});
