import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FIELD_CASES } from '../support/cases.ts';
import { forEachDialect, type Harness, registryAuth, startHarness, templateBody } from '../support/harness.ts';

const TEMPLATE_FIELDS = [
  'id',
  'name',
  'imageName',
  'category',
  'containerDiskInGb',
  'volumeInGb',
  'volumeMountPath',
  'containerRegistryAuthId',
  'dockerEntrypoint',
  'dockerStartCmd',
  'env',
  'ports',
  'readme',
  'isPublic',
  'isPlatform',
  'isServerless',
  'earned',
  'runtimeInMin',
  'revision',
  'createdAt',
  'updatedAt',
  'imageCheck',
].sort();

// Validation messages are sentences a person understands: no regular expression or API route in a message or the
// detail; the pattern, where one was broken, travels beside the message as `pattern`, for programs.
const ENV_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';
const ENV_NAME_WORDS = 'must be letters, digits and underscores only, not starting with a digit (like HF_TOKEN)';
/** What a message for people must not hold: a regular expression's anchors and classes, or an API route. */
const FOR_DEVELOPERS = /\^|\$|\[A-Z|\/v1\/|<http\|tcp>|PUT |POST /;

forEachDialect('POST /v1/templates', (dialect) => {
  let h: Harness;
  let alice: string;
  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
  });
  after(() => h.close());

  test('creates with every default and answers every field of the Template', async () => {
    const r = await h.call('POST', '/v1/templates', { key: alice, body: { name: 'minimal', imageName: 'ubuntu:22.04' } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), TEMPLATE_FIELDS);
    const { id, createdAt, updatedAt, ...rest } = r.body;
    assert.match(id, /^[0-9a-z]{16}$/);
    assert.equal(r.headers.location, `/v1/templates/${id}`);
    assert.equal(createdAt, updatedAt);
    assert.ok(Math.abs(Date.parse(createdAt) - Date.now()) < 60_000);
    assert.deepEqual(rest, {
      name: 'minimal',
      imageName: 'ubuntu:22.04',
      category: 'NVIDIA',
      containerDiskInGb: 50,
      volumeInGb: 20,
      volumeMountPath: '/workspace',
      containerRegistryAuthId: '',
      dockerEntrypoint: [],
      dockerStartCmd: [],
      env: {},
      ports: [],
      readme: '',
      isPublic: false,
      isPlatform: false,
      isServerless: false,
      earned: 0,
      runtimeInMin: 0,
      revision: 1,
      // The harness turns image checks off (test/http/image-checks.test.ts turns them on).
      imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
    });
    const stored = await h.call('GET', `/v1/templates/${id}`, { key: alice });
    assert.deepEqual(stored.body, r.body);
  });

  test('keeps every given field exactly, env in its order', async () => {
    const body = {
      name: '  spaced name  ',
      imageName: 'ghcr.io/org/img:v2',
      category: 'AMD',
      containerDiskInGb: 7,
      volumeInGb: 0,
      volumeMountPath: '/data',
      containerRegistryAuthId: await registryAuth(h, alice),
      dockerEntrypoint: ['/bin/sh', '-c'],
      dockerStartCmd: ['echo hi'],
      env: { Z: 'last', A: 'first', EMPTY: '' },
      ports: ['8888/http', '22/tcp'],
      readme: '# Hello\n\n*markdown*',
      isPublic: true,
      isServerless: true,
    };
    const r = await h.call('POST', '/v1/templates', { key: alice, body });
    assert.equal(r.status, 200);
    assert.deepEqual({ ...r.body, name: r.body.name }, { ...r.body, ...body, name: 'spaced name' });
    assert.deepEqual(Object.keys(r.body.env), ['Z', 'A', 'EMPTY']);
    const again = await h.call('GET', `/v1/templates/${r.body.id}`, { key: alice });
    assert.equal(again.text, r.text);
  });

  test('a platform key creates official templates', async () => {
    const platform = await h.key('platform-ops', 'platform');
    const r = await h.call('POST', '/v1/templates', { key: platform, body: templateBody() });
    assert.equal(r.status, 200);
    assert.equal(r.body.isPlatform, true);
  });

  for (const [field, value, accepted] of FIELD_CASES) {
    const shown = JSON.stringify(value)?.slice(0, 40);
    test(`${field} = ${shown}${JSON.stringify(value)?.length > 40 ? '…' : ''} is ${accepted ? 'accepted' : 'refused'}`, async () => {
      const r = await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ [field]: value }) });
      if (accepted) {
        assert.equal(r.status, 200, r.text);
        if (field !== 'name') assert.deepEqual(r.body[field], value);
      } else {
        assert.equal(r.status, 400, r.text);
        assert.match(String(r.headers['content-type']), /^application\/problem\+json/);
        assert.equal(r.body.status, 400);
        assert.ok(r.body.errors.length >= 1);
        for (const e of r.body.errors) assert.ok(e.path === `/${field}` || e.path.startsWith(`/${field}/`), `${e.path} names ${field}`);
        assert.ok(r.body.detail.includes(field));
      }
    });
  }

  test('an uppercase repository is refused with the words "repository names must be lowercase"', async () => {
    const r = await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ imageName: 'RunPod/PyTorch:2.1' }) });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors, [{ in: 'body', path: '/imageName', message: 'repository names must be lowercase' }]);
  });

  test('names every bad field at once, by path', async () => {
    const r = await h.call('POST', '/v1/templates', {
      key: alice,
      body: {
        name: '',
        imageName: 'ok',
        containerDiskInGb: 0,
        env: { 'bad-name': 'x', GOOD: 2 },
        ports: ['1/tcp', 'x', '1/tcp'],
        extra: true,
      },
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.errors.map((e: { path: string }) => e.path).sort(), [
      '/containerDiskInGb',
      '/env/GOOD',
      '/env/bad-name',
      '/extra',
      '/name',
      '/ports/1',
      '/ports/2',
    ]);
  });

  test('refuses missing required fields, unknown and read-only fields by name', async () => {
    const r = await h.call('POST', '/v1/templates', {
      key: alice,
      body: { id: 'x', isPlatform: true, earned: 5, runtimeInMin: 1, color: 'red' },
    });
    assert.equal(r.status, 400);
    const byPath = Object.fromEntries(r.body.errors.map((e: { path: string; message: string }) => [e.path, e.message]));
    assert.equal(byPath['/name'], 'is required');
    assert.equal(byPath['/imageName'], 'is required');
    assert.equal(byPath['/color'], 'is not a known field');
    for (const f of ['/id', '/isPlatform', '/earned', '/runtimeInMin']) assert.match(byPath[f], /read-only/);
  });

  test('the same name twice for one owner is a 409 naming the field; another owner may reuse it', async () => {
    const body = templateBody();
    assert.equal((await h.call('POST', '/v1/templates', { key: alice, body })).status, 200);
    const again = await h.call('POST', '/v1/templates', { key: alice, body: { ...body, name: ` ${body.name} ` } });
    assert.equal(again.status, 409);
    assert.deepEqual(
      again.body.errors?.map((e: { path: string }) => e.path),
      ['/name'],
    );
    const bob = await h.key('bob');
    assert.equal((await h.call('POST', '/v1/templates', { key: bob, body })).status, 200);
  });

  test('a bad variable name and a bad port are explained in words, the pattern beside them', async () => {
    const r = await h.call('POST', '/v1/templates', {
      key: alice,
      body: { name: 'x', imageName: 'ubuntu', env: { 'bad-name': 'x' }, ports: ['1/udp'] },
    });
    assert.equal(r.status, 400);
    const [env, port] = r.body.errors;
    assert.deepEqual(env, { in: 'body', path: '/env/bad-name', message: ENV_NAME_WORDS, pattern: ENV_NAME });
    assert.equal(port.path, '/ports/0');
    assert.equal(port.message, 'must be a port from 1 to 65535 and the protocol http or tcp, like 8888/http');
    assert.match(port.pattern, /\(\?:http\|tcp\)\$$/);
    for (const e of r.body.errors) assert.doesNotMatch(e.message, FOR_DEVELOPERS);
  });

  test('a malformed secret reference is named in the same 400 as the fields the schema refuses, not in a second one', async () => {
    for (const method of ['POST', 'PATCH'] as const) {
      const url =
        method === 'POST'
          ? '/v1/templates'
          : `/v1/templates/${(await h.call('POST', '/v1/templates', { key: alice, body: { name: `ref ${method}`, imageName: 'ubuntu' } })).body.id}`;
      const r = await h.call(method, url, {
        key: alice,
        body: {
          ...(method === 'POST' ? { name: 'refs', imageName: 'ubuntu' } : {}),
          env: { OK: '{{ secret.my-token }}', '1X': 'a' },
          ports: ['70000/http'],
        },
      });
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(r.body.errors.map((e: { path: string }) => e.path).sort(), ['/env/1X', '/env/OK', '/ports/0'], r.text);
      assert.match(r.body.detail, /env\/1X/);
      assert.match(r.body.detail, /env\/OK/);
    }
  });

  test('a bad secret name, and a token in a public template, are explained without API routes', async () => {
    const secret = await h.call('PUT', '/v1/secrets/bad-name', { key: alice, body: { value: 'x' } });
    assert.equal(secret.status, 400);
    assert.deepEqual(secret.body.errors, [{ in: 'path', path: '/name', message: ENV_NAME_WORDS, pattern: ENV_NAME }]);
    const token = await h.call('POST', '/v1/templates', {
      key: alice,
      body: { name: 'y', imageName: 'ubuntu', isPublic: true, env: { T: 'hf_dKrY5cJqXElSz6DkRyfMt07eLsZGnU18Fm' } },
    });
    assert.equal(token.status, 400);
    assert.doesNotMatch(token.body.detail, FOR_DEVELOPERS);
    assert.match(token.body.detail, /Store the value as a secret of your account and refer to it as \{\{ secret\.NAME \}\}/);
  });
});
