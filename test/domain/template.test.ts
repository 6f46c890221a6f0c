import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DomainError } from '../../src/domain/errors.ts';
import {
  applyUpdate,
  checkSentBack,
  newTemplateContent,
  sameValue,
  TEMPLATE_DEFAULTS,
  type Template,
  type TemplateContent,
  TemplateCreate,
  Template as TemplateSchema,
  TemplateUpdate,
  templateJson,
  withoutRegistryAuth,
} from '../../src/domain/template.ts';

// docs/api.md, "Templates" (the defaults) and "Update" (partial, arrays and env replaced whole, null or "" clears
// the registry auth), and the Template as the API shows it.

/** The create defaults, written out: every content field but name and imageName. */
const CREATE_DEFAULTS = {
  category: 'NVIDIA',
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: '/workspace',
  isPublic: false,
  isServerless: false,
  readme: '',
  dockerEntrypoint: [],
  dockerStartCmd: [],
  env: {},
  ports: [],
  containerRegistryAuthId: '',
};

/** The Template's fields, in the order of its schema (and of every response). */
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
  'isServerless',
  'isPlatform',
  'earned',
  'runtimeInMin',
  'revision',
  'createdAt',
  'updatedAt',
  'imageCheck',
];

const content = (): TemplateContent => ({
  name: 'trainer',
  imageName: 'runpod/pytorch:2.1.0',
  category: 'AMD',
  containerDiskInGb: 80,
  volumeInGb: 100,
  volumeMountPath: '/data',
  containerRegistryAuthId: 'cra_1',
  dockerEntrypoint: ['bash', '-c'],
  dockerStartCmd: ['python', 'train.py'],
  env: { A: '1', B: '2' },
  ports: ['8888/http', '22/tcp'],
  readme: '# Trainer',
  isPublic: true,
  isServerless: true,
});

test('a new template with only a name and an image gets every default', () => {
  assert.deepEqual(newTemplateContent({ name: 'n', imageName: 'ubuntu' }), { name: 'n', imageName: 'ubuntu', ...CREATE_DEFAULTS });
  assert.deepEqual(TEMPLATE_DEFAULTS, CREATE_DEFAULTS);
});

test('the create schema announces the same defaults, and the update schema none: absent update fields keep their value', () => {
  const announced = Object.fromEntries(
    Object.entries(TemplateCreate.properties)
      .filter(([, schema]) => 'default' in schema)
      .map(([field, schema]) => [field, (schema as { default: unknown }).default]),
  );
  assert.deepEqual(announced, CREATE_DEFAULTS);
  const updateDefaults = Object.entries(TemplateUpdate.properties).filter(([, schema]) => 'default' in schema);
  assert.deepEqual(updateDefaults, []);
});

test('a new template keeps every value it was given, false, zero and empty ones included', () => {
  const given = content();
  assert.deepEqual(newTemplateContent(given), content());
  assert.deepEqual(newTemplateContent({ name: 'n', imageName: 'ubuntu', volumeInGb: 0, isPublic: false, readme: '', env: { X: '' } }), {
    ...CREATE_DEFAULTS,
    name: 'n',
    imageName: 'ubuntu',
    volumeInGb: 0,
    env: { X: '' },
  });
});

test('each new template has arrays and env of its own: changing one changes neither the defaults nor the next template', () => {
  const first = newTemplateContent({ name: 'a', imageName: 'ubuntu' });
  first.env.A = '1';
  first.ports.push('80/http');
  first.dockerEntrypoint.push('sh');
  first.dockerStartCmd.push('run');
  assert.deepEqual(TEMPLATE_DEFAULTS, CREATE_DEFAULTS);
  assert.deepEqual(newTemplateContent({ name: 'b', imageName: 'ubuntu' }), { name: 'b', imageName: 'ubuntu', ...CREATE_DEFAULTS });
});

test('an empty update keeps every value, in a new object, and leaves the current content untouched', () => {
  const current = content();
  const updated = applyUpdate(current, {});
  assert.deepEqual(updated, content());
  assert.notEqual(updated, current);
  assert.deepEqual(current, content());
});

test('an update changes exactly the fields it sends; absent and undefined fields keep their value', () => {
  const current = content();
  assert.deepEqual(applyUpdate(current, { name: 'renamed', volumeInGb: 0, isPublic: false, readme: undefined }), {
    ...content(),
    name: 'renamed',
    volumeInGb: 0,
    isPublic: false,
  });
  assert.deepEqual(current, content());
});

test('containerRegistryAuthId null or "" clears it, another id replaces it, absent keeps it', () => {
  assert.equal(applyUpdate(content(), { containerRegistryAuthId: null }).containerRegistryAuthId, '');
  assert.equal(applyUpdate(content(), { containerRegistryAuthId: '' }).containerRegistryAuthId, '');
  assert.equal(applyUpdate(content(), { containerRegistryAuthId: 'cra_2' }).containerRegistryAuthId, 'cra_2');
  assert.equal(applyUpdate(content(), { name: 'x' }).containerRegistryAuthId, 'cra_1');
});

test('env, ports and the command arrays are replaced whole, never merged', () => {
  assert.deepEqual(applyUpdate(content(), { env: { C: '3' } }).env, { C: '3' });
  assert.deepEqual(applyUpdate(content(), { env: { A: 'changed' } }).env, { A: 'changed' });
  assert.deepEqual(applyUpdate(content(), { env: {} }).env, {});
  assert.deepEqual(applyUpdate(content(), { ports: ['22/tcp'] }).ports, ['22/tcp']);
  assert.deepEqual(applyUpdate(content(), { ports: [] }).ports, []);
  assert.deepEqual(applyUpdate(content(), { dockerEntrypoint: ['sh'] }).dockerEntrypoint, ['sh']);
  assert.deepEqual(applyUpdate(content(), { dockerStartCmd: [] }).dockerStartCmd, []);
});

test('sameValue: env key order does not matter, but every key and value does', () => {
  assert.equal(sameValue({ A: '1', B: '2' }, { B: '2', A: '1' }), true);
  assert.equal(sameValue({}, {}), true);
  assert.equal(sameValue({ A: '1' }, { A: '2' }), false);
  assert.equal(sameValue({ A: '1' }, { A: '1', B: '2' }), false);
  assert.equal(sameValue({ A: '1', B: '2' }, { A: '1' }), false);
  assert.equal(sameValue({ A: '1' }, { a: '1' }), false);
  assert.equal(sameValue({ A: undefined }, { B: undefined }), false); // same size, other keys
  assert.equal(sameValue({ A: '' }, {}), false);
});

test('sameValue: arrays are ordered and compared element by element', () => {
  assert.equal(sameValue(['8888/http', '22/tcp'], ['8888/http', '22/tcp']), true);
  assert.equal(sameValue([], []), true);
  assert.equal(sameValue(['8888/http', '22/tcp'], ['22/tcp', '8888/http']), false);
  assert.equal(sameValue(['a'], ['a', 'a']), false);
  assert.equal(sameValue(['a', 'a'], ['a']), false);
  assert.equal(sameValue([['a', 'b']], [['a', 'b']]), true);
  assert.equal(sameValue([['a', 'b']], [['b', 'a']]), false);
});

test('sameValue: values of different types are never the same', () => {
  assert.equal(sameValue('1', 1), false);
  assert.equal(sameValue(true, 1), false);
  assert.equal(sameValue('', null), false);
  assert.equal(sameValue(null, {}), false);
  assert.equal(sameValue({}, null), false);
  assert.equal(sameValue([], {}), false);
  assert.equal(sameValue({}, []), false);
  assert.equal(sameValue(['a'], { 0: 'a' }), false);
  assert.equal(sameValue({ 0: 'a' }, ['a']), false);
  assert.equal(sameValue(null, null), true);
  assert.equal(sameValue(0, 0), true);
  assert.equal(sameValue('x', 'x'), true);
  assert.equal(sameValue(false, false), true);
});

test('the Template schema has exactly these fields, in this order', () => {
  assert.deepEqual(Object.keys(TemplateSchema.properties), TEMPLATE_FIELDS);
});

test('templateJson shows exactly the Template fields in schema order, and nothing else (no ownerId, no endpointId)', () => {
  const stored = {
    ownerId: 'acc_a',
    endpointId: 'ep_1',
    updatedAt: '2026-01-02T03:04:06.000Z',
    imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
    createdAt: '2026-01-02T03:04:05.678Z',
    revision: 3,
    runtimeInMin: 12,
    earned: 1.5,
    isPlatform: false,
    ...content(),
    env: { Z: 'z', A: 'a' },
    id: 'tmpl_1',
    keyHash: 'secret',
  };
  const json = templateJson(stored as Template);
  assert.deepEqual(Object.keys(JSON.parse(json)), TEMPLATE_FIELDS);
  assert.equal(
    json,
    '{"id":"tmpl_1","name":"trainer","imageName":"runpod/pytorch:2.1.0","category":"AMD","containerDiskInGb":80,"volumeInGb":100,' +
      '"volumeMountPath":"/data","containerRegistryAuthId":"cra_1","dockerEntrypoint":["bash","-c"],"dockerStartCmd":["python","train.py"],' +
      '"env":{"Z":"z","A":"a"},"ports":["8888/http","22/tcp"],"readme":"# Trainer","isPublic":true,"isServerless":true,' +
      '"isPlatform":false,"earned":1.5,"runtimeInMin":12,"revision":3,"createdAt":"2026-01-02T03:04:05.678Z","updatedAt":"2026-01-02T03:04:06.000Z",' +
      '"imageCheck":{"status":"off","checkedAt":null,"digest":null,"platforms":[],"sizeBytes":null,"cudaVersion":null,"reason":null}}',
  );
});

const read = (): Template & { ownerName: string } => ({
  id: 'tmpl_1',
  ownerName: 'alice',
  ...content(),
  isPlatform: false,
  earned: 1.5,
  runtimeInMin: 12,
  revision: 3,
  createdAt: '2026-01-02T03:04:05.678Z',
  updatedAt: '2026-01-02T03:04:06.000Z',
  imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
});

test('a template sent back as read, with its fixed and server-set fields, applies only its content', () => {
  const current = read();
  const sent = { ...read(), readme: 'edited', id: 'ignored?', earned: 99 } as TemplateUpdate;
  const applied = applyUpdate(content(), sent);
  assert.deepEqual(applied, { ...content(), readme: 'edited' });
  assert.doesNotThrow(() => checkSentBack(current, { ...read(), readme: 'edited' } as TemplateUpdate));
});

test('sent-back fields equal to the current ones pass; timestamps are compared as instants', () => {
  const current = read();
  for (const update of [
    {},
    { revision: 3 },
    { createdAt: '2026-01-02T03:04:05.678+00:00', updatedAt: '2026-01-02T04:04:06+01:00' },
    { category: 'AMD', isServerless: true, isPlatform: false, earned: 1.5, runtimeInMin: 12, id: 'tmpl_1', ownerName: 'alice' },
  ]) {
    assert.doesNotThrow(() => checkSentBack(current, update as TemplateUpdate), JSON.stringify(update));
  }
});

test('a sent-back field with another value is refused by name, with its current value; revision is a 412 first', () => {
  const current = read();
  const refusal = (update: Record<string, unknown>) => {
    try {
      checkSentBack(current, update as TemplateUpdate);
    } catch (error) {
      assert.ok(error instanceof DomainError);
      return { kind: error.kind, errors: error.errors.map((e) => `${e.path}: ${e.message}`) };
    }
    assert.fail(`${JSON.stringify(update)} passed`);
  };
  assert.deepEqual(refusal({ category: 'CPU', earned: 0, createdAt: '2026-01-02T03:04:05.679Z' }), {
    kind: 'invalid',
    errors: [
      `/category: can't be changed after the template is created; send its current value ("AMD") or leave it out`,
      '/earned: is read-only: the server sets it; send its current value (1.5) or leave it out',
      '/createdAt: is read-only: the server sets it; send its current value ("2026-01-02T03:04:05.678Z") or leave it out',
    ],
  });
  assert.deepEqual(refusal({ revision: 2, category: 'CPU' }), { kind: 'precondition-failed', errors: [] });
  assert.deepEqual(refusal({ ownerName: 'bob' }).errors, [
    '/ownerName: is read-only: the server sets it; send its current value ("alice") or leave it out',
  ]);
  assert.deepEqual(refusal({ isServerless: false }).errors, [
    `/isServerless: can't be changed after the template is created; send its current value (true) or leave it out`,
  ]);
});

test('withoutRegistryAuth is templateJson with "" as the registry auth id, whatever the other fields hold', () => {
  const key = '"containerRegistryAuthId":"';
  const tricky = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.constantFrom(key, `${key}x"`, '\\', '\\"', '"', `\\${key}`, `x\\\\",${key}`, `","containerRegistryAuthId":"evil`),
  );
  const text = fc.array(tricky, { maxLength: 4 }).map((parts) => parts.join(''));
  fc.assert(
    fc.property(
      fc.record({ name: text, volumeMountPath: text, containerRegistryAuthId: text, readme: text, envValue: text }),
      ({ envValue, ...fields }) => {
        const t = {
          ...content(),
          ...fields,
          env: { [`K${envValue.length}`]: envValue },
          id: 'tmpl_1',
          isPlatform: false,
          earned: 0,
          runtimeInMin: 0,
          revision: 1,
          createdAt: '2026-01-02T03:04:05.678Z',
          updatedAt: '2026-01-02T03:04:05.678Z',
          imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
        } as Template;
        assert.equal(withoutRegistryAuth(templateJson(t), t.containerRegistryAuthId), templateJson({ ...t, containerRegistryAuthId: '' }));
      },
    ),
    { numRuns: 2000 },
  );
});

test('withoutRegistryAuth removes the field by name: an env variable named containerRegistryAuthId keeps its value', () => {
  const t = {
    ...content(),
    containerRegistryAuthId: 'auth_real',
    env: { containerRegistryAuthId: 'auth_in_env', B: '"containerRegistryAuthId":"x' },
    id: 'tmpl_1',
    isPlatform: false,
    earned: 0,
    runtimeInMin: 0,
    revision: 1,
    createdAt: '2026-01-02T03:04:05.678Z',
    updatedAt: '2026-01-02T03:04:05.678Z',
    imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
  } as Template;
  // The fields in another order than the schema's (env first): a cut by text position would take env's.
  const { env, ...rest } = t;
  const reordered = JSON.stringify({ env, ...rest });
  const shown = JSON.parse(withoutRegistryAuth(reordered, t.containerRegistryAuthId));
  assert.equal(shown.containerRegistryAuthId, '');
  assert.deepEqual(shown.env, t.env);
  assert.equal(
    withoutRegistryAuth(templateJson({ ...t, containerRegistryAuthId: '' }), ''),
    templateJson({ ...t, containerRegistryAuthId: '' }),
  );
});
