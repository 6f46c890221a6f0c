import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_DEPTH, MAX_MEMBERS, tooWide as tooWideBytes } from '../../src/http/plugins/json-width.ts';

// The scan that refuses junk before it is parsed: it finds the first object or array wider than MAX_MEMBERS or a
// nesting deeper than MAX_DEPTH, names where, and is never fooled by commas, brackets or quotes inside strings.

/** The scan of a body sent as this text, in UTF-8. */
const tooWide = (text: string) => tooWideBytes(Buffer.from(text));
const members = (n: number, item: (i: number) => string) => Array.from({ length: n }, (_, i) => item(i)).join(',');

test('an object or array of exactly MAX_MEMBERS passes; one more is named by its JSON Pointer', () => {
  assert.equal(tooWide(`{${members(MAX_MEMBERS, (i) => `"k${i}":1`)}}`), undefined);
  assert.deepEqual(tooWide(`{${members(MAX_MEMBERS + 1, (i) => `"k${i}":1`)}}`), {
    path: '',
    message: `has more than ${MAX_MEMBERS} keys; no request needs that many`,
  });
  assert.equal(tooWide(`{"a":[${members(MAX_MEMBERS, () => '0')}]}`), undefined);
  assert.deepEqual(tooWide(`{"a":[${members(MAX_MEMBERS + 1, () => '0')}]}`), {
    path: '/a',
    message: `has more than ${MAX_MEMBERS} items; no request needs that many`,
  });
});

test('paths name keys (escaped as JSON Pointer, JSON escapes decoded) and array indexes', () => {
  const wide = `[${members(MAX_MEMBERS + 1, () => '1')}]`;
  assert.equal(tooWide(`{"x":1,"a/b~c":{"y":[0,1,${wide}]}}`)?.path, '/a~1b~0c/y/2');
  assert.equal(tooWide(`{"\\u0041\\"q":${wide}}`)?.path, '/A"q');
  // Keys beyond ASCII are named from their UTF-8 bytes, whole; such bytes never pass for a quote or a bracket.
  assert.equal(tooWide(`{"ключ":{"🚀\\u00e9":${wide}}}`)?.path, '/ключ/🚀é');
});

test('nesting of MAX_DEPTH passes; one level more is refused where it starts', () => {
  assert.equal(tooWide(`${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}`), undefined);
  assert.deepEqual(tooWide(`{"a":${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}}`), {
    path: `/a${'/0'.repeat(MAX_DEPTH - 1)}`,
    message: `nests deeper than ${MAX_DEPTH} levels`,
  });
});

test('commas, brackets, braces and escaped quotes inside strings count for nothing', () => {
  const text = JSON.stringify({ readme: `${',['.repeat(5000)}\\"{{`, env: { A: '"],}' }, last: '\\' });
  assert.equal(tooWide(text), undefined);
});

test('malformed text never throws or loops: JSON.parse judges it next', () => {
  for (const text of ['"unterminated', '{"a":"\\', ']]]]', '{{{', ',,,,', '{"a" 1 2 3}', '']) assert.equal(tooWide(text), undefined);
});
