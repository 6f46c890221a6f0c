import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changeRows, diffOf } from '../../ui/src/diff.ts';

// Diffs as the UI shows them: fields by the form's labels, the environment one variable a row.

test('a diff reads by label, and the environment by variable: added, removed, changed; unchanged ones left out', () => {
  assert.deepEqual(
    changeRows([
      { field: 'imageName', from: 'a/b:1', to: 'a/b:2' },
      { field: 'env', from: { KEEP: '1', GONE: 'x', MODEL: 'base' }, to: { KEEP: '1', MODEL: 'refiner', NEW: '' } },
      { field: 'isPublic', from: false, to: true },
      { field: 'ports', from: [], to: ['8888/http', '22/tcp'] },
      { field: 'readme', from: '', to: '# hi' },
      { field: 'somethingNew', from: 1, to: 2 },
    ]),
    [
      { label: 'Image', from: 'a/b:1', to: 'a/b:2' },
      { label: 'Variable GONE', variable: 'GONE', from: 'x', to: undefined },
      { label: 'Variable MODEL', variable: 'MODEL', from: 'base', to: 'refiner' },
      { label: 'Variable NEW', variable: 'NEW', from: undefined, to: '' },
      { label: 'Public', from: 'no', to: 'yes' },
      { label: 'Ports', from: '(none)', to: '8888/http 22/tcp' },
      { label: 'Readme', from: '(empty)', to: '# hi' },
      { label: 'somethingNew', from: '1', to: '2' },
    ],
  );
});

test('a diff made in the browser names the fields that differ, the same map in another order being no change', () => {
  const before = { name: 'x', env: { A: '1', B: '2' }, ports: ['1/http'], id: 't1' };
  assert.deepEqual(diffOf(before, { name: 'x', env: { B: '2', A: '1' }, ports: ['1/http'] }), []);
  assert.deepEqual(diffOf(before, { name: 'y', env: { A: '1' }, ports: ['1/http'], unknown: 1 }), [
    { field: 'name', from: 'x', to: 'y' },
    { field: 'env', from: { A: '1', B: '2' }, to: { A: '1' } },
  ]);
});

test("variables named like an object's own properties (toString, constructor) are added and removed as any other", () => {
  assert.deepEqual(changeRows([{ field: 'env', from: { constructor: 'x' }, to: { toString: 'v' } }]), [
    { label: 'Variable constructor', variable: 'constructor', from: 'x', to: undefined },
    { label: 'Variable toString', variable: 'toString', from: undefined, to: 'v' },
  ]);
});
