import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyOf, controlFor, EMPTY_FORM, formOf, nextLink, type Template } from '../../ui/src/model.ts';

// The UI's pure half: a template to its form and back, and an API error's JSON Pointer to the form control it names.

const template: Template = {
  id: 't1',
  name: 'notebook',
  imageName: 'runpod/pytorch:2.1',
  category: 'AMD',
  containerDiskInGb: 10,
  volumeInGb: 0,
  volumeMountPath: '/data',
  containerRegistryAuthId: '',
  dockerEntrypoint: ['bash', '-c'],
  dockerStartCmd: ['jupyter lab'],
  env: { A: '1', B_C: 'x y' },
  ports: ['8888/http', '22/tcp'],
  readme: '# hi',
  isPublic: true,
  isServerless: false,
  isPlatform: false,
  earned: 0,
  runtimeInMin: 0,
  revision: 3,
  createdAt: '2026-11-22T00:00:00.000Z',
  updatedAt: '2026-11-22T00:00:00.000Z',
  imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
};

test('a template read into the form and sent back is the same content', () => {
  const body = bodyOf(formOf(template), 'create');
  const {
    id: _id,
    isPlatform: _p,
    earned: _e,
    runtimeInMin: _r,
    revision: _v,
    createdAt: _c,
    updatedAt: _u,
    imageCheck: _i,
    ...content
  } = template;
  assert.deepEqual(body, content);
});

test('an update leaves out the fields fixed at creation', () => {
  const body = bodyOf(formOf(template), 'update');
  assert.equal('category' in body, false);
  assert.equal('isServerless' in body, false);
  assert.deepEqual(body.ports, ['8888/http', '22/tcp']);
});

test('blank rows are not sent; numbers that are not numbers are sent as typed, for the API to name', () => {
  const form = {
    ...structuredClone(EMPTY_FORM),
    containerDiskInGb: 'ten',
    env: [
      { key: '', value: '' },
      { key: 'X', value: '' },
    ],
    ports: [
      { port: '', protocol: 'http' },
      { port: ' 70000 ', protocol: 'tcp' },
    ],
  };
  const body = bodyOf(form, 'create');
  assert.equal(body.containerDiskInGb, 'ten');
  assert.deepEqual(body.env, { X: '' });
  assert.deepEqual(body.ports, ['70000/tcp']);
  // The API's /ports/0 is the first row sent: the form's second row.
  assert.equal(controlFor('/ports/0', form), '/ports/1');
  assert.equal(controlFor('/env/X', form), '/env/1');
  assert.equal(controlFor('/env/a~1b', { ...form, env: [{ key: 'a/b', value: '' }] }), '/env/0');
  assert.equal(controlFor('/env/NOPE', form), '/env');
  assert.equal(controlFor('/dockerStartCmd/3', form), '/dockerStartCmd');
  assert.equal(controlFor('/name', form), '/name');
  assert.equal(controlFor('', form), '');
});

test('the next page is read from the Link header', () => {
  assert.equal(nextLink('</v1/templates?limit=2&cursor=cDU>; rel="next"'), '/v1/templates?limit=2&cursor=cDU');
  assert.equal(nextLink('</a>; rel="prev", </b>; rel="next"'), '/b');
  assert.equal(nextLink(null), undefined);
  assert.equal(nextLink('</a>; rel="prev"'), undefined);
});
