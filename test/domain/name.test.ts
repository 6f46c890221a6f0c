import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trimName } from '../../src/domain/name.ts';

// trimName runs on a request body before validation: a name is 1–255 characters *after trimming* (docs/api.md).

test('a string name is trimmed of surrounding white space, inner white space kept', () => {
  const body = { name: ' \t\n my  template \r\n\u00a0\u3000', imageName: 'ubuntu' };
  trimName(body);
  assert.deepEqual(body, { name: 'my  template', imageName: 'ubuntu' });
});

test('only the name is trimmed: every other field is left exactly as sent', () => {
  const body = { name: ' a ', imageName: ' ubuntu ', readme: '  keep  ', env: { A: ' x ' }, dockerStartCmd: [' y '] };
  trimName(body);
  assert.deepEqual(body, { name: 'a', imageName: ' ubuntu ', readme: '  keep  ', env: { A: ' x ' }, dockerStartCmd: [' y '] });
});

test('a name of white space only becomes the empty string, for the validator to refuse', () => {
  const body = { name: '   ' };
  trimName(body);
  assert.deepEqual(body, { name: '' });
});

test('a name that is not a string is left as it is, for the validator to refuse', () => {
  for (const name of [42, null, true, [' a '], { x: ' a ' }, undefined]) {
    const body = { name, other: ' b ' };
    trimName(body);
    assert.deepEqual(body, { name, other: ' b ' }, JSON.stringify(name));
  }
});

test('a body without a name gets none', () => {
  const body: Record<string, unknown> = { imageName: ' ubuntu ' };
  trimName(body);
  assert.deepEqual(body, { imageName: ' ubuntu ' });
  assert.equal(Object.hasOwn(body, 'name'), false);
});

test('a body that is not an object is accepted without complaint', () => {
  for (const body of [undefined, null, '', ' name ', 0, 1, false, true]) assert.equal(trimName(body), undefined);
  const array = [' a '];
  trimName(array);
  assert.deepEqual(array, [' a ']);
});
