import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contentOf, diffContent } from '../../src/domain/revision.ts';
import { CONTENT_FIELDS, type Template, type TemplateContent } from '../../src/domain/template.ts';

// docs/api.md: revisions are full snapshots, each with its diff against the one before; a rolling release
// records the diff too. An update that changes nothing makes no revision: its diff is empty.

/** Every field a user chooses, in the order of the Template's fields. */
const CONTENT = [
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
];

const content = (): TemplateContent => ({
  name: 'trainer',
  imageName: 'runpod/pytorch:2.1.0',
  category: 'NVIDIA',
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: '/workspace',
  containerRegistryAuthId: '',
  dockerEntrypoint: [],
  dockerStartCmd: ['python', 'train.py'],
  env: { A: '1', B: '2' },
  ports: ['8888/http', '22/tcp'],
  readme: '',
  isPublic: false,
  isServerless: true,
});

const template = (overrides: Partial<Template> = {}): Template => ({
  id: 'tmpl_1',
  ...content(),
  isPlatform: false,
  earned: 0,
  runtimeInMin: 0,
  revision: 1,
  createdAt: '2026-01-02T03:04:05.678Z',
  updatedAt: '2026-01-02T03:04:05.678Z',
  imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
  ...overrides,
});

test('the content fields are every field a user chooses, in the order of the Template', () => {
  assert.deepEqual(CONTENT_FIELDS, CONTENT);
});

test('contentOf keeps exactly the content fields, in order, with their values; identity, accounting and history are dropped', () => {
  const stored = { ...template({ revision: 7, earned: 3 }), ownerId: 'acc_a', endpointId: 'ep_1' };
  const picked = contentOf(stored);
  assert.deepEqual(Object.keys(picked), CONTENT);
  assert.deepEqual(picked, content());
});

test('the same content has an empty diff, whether or not it is the same object', () => {
  const a = content();
  assert.deepEqual(diffContent(a, a), []);
  assert.deepEqual(diffContent(content(), content()), []);
  assert.deepEqual(diffContent(content(), { ...content(), env: { B: '2', A: '1' } }), []); // env key order is not a change
});

test('fields outside the content are never in a diff', () => {
  const before = template();
  const after = template({
    id: 'tmpl_2',
    revision: 2,
    earned: 9,
    runtimeInMin: 60,
    isPlatform: true,
    updatedAt: '2027-01-01T00:00:00.000Z',
  });
  assert.deepEqual(diffContent(before, after), []);
});

test('a diff lists each changed field once, in the order of the Template, with its value before and after', () => {
  const before = content();
  const after: TemplateContent = {
    ...content(),
    isPublic: true,
    ports: ['22/tcp', '8888/http'], // the same ports in another order: a change
    env: { A: '1' },
    containerRegistryAuthId: 'cra_1',
    name: 'trainer v2',
  };
  assert.deepEqual(diffContent(before, after), [
    { field: 'name', from: 'trainer', to: 'trainer v2' },
    { field: 'containerRegistryAuthId', from: '', to: 'cra_1' },
    { field: 'env', from: { A: '1', B: '2' }, to: { A: '1' } },
    { field: 'ports', from: ['8888/http', '22/tcp'], to: ['22/tcp', '8888/http'] },
    { field: 'isPublic', from: false, to: true },
  ]);
});

test('a diff backwards is the same fields with before and after swapped', () => {
  const before = content();
  const after: TemplateContent = { ...content(), volumeInGb: 0, dockerStartCmd: [], readme: '# Hi' };
  assert.deepEqual(diffContent(after, before), [
    { field: 'volumeInGb', from: 0, to: 20 },
    { field: 'dockerStartCmd', from: [], to: ['python', 'train.py'] },
    { field: 'readme', from: '# Hi', to: '' },
  ]);
});

test('every content field, changed alone, is the one field in the diff', () => {
  const changed: TemplateContent = {
    name: 'other',
    imageName: 'ubuntu:22.04',
    category: 'CPU',
    containerDiskInGb: 51,
    volumeInGb: 21,
    volumeMountPath: '/data',
    containerRegistryAuthId: 'cra_9',
    dockerEntrypoint: ['sh'],
    dockerStartCmd: ['python'],
    env: { A: '1', B: '3' },
    ports: ['8888/http'],
    readme: 'x',
    isPublic: true,
    isServerless: false,
  };
  for (const field of CONTENT) {
    const key = field as keyof TemplateContent;
    const after = { ...content(), [key]: changed[key] };
    assert.deepEqual(diffContent(content(), after), [{ field, from: content()[key], to: changed[key] }], field);
  }
});
