import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conflict, DomainError, escapePointer, forbidden, invalid, notFound } from '../../src/domain/errors.ts';

// Errors name the offending field as a JSON Pointer (docs/errors.md: "errors": [{ "path": "/ports/1", … }]).

test('a key becomes a JSON Pointer segment: "~" is "~0" and "/" is "~1", "~" first so that "~1" stays two characters', () => {
  assert.equal(escapePointer('HF_HOME'), 'HF_HOME');
  assert.equal(escapePointer(''), '');
  assert.equal(escapePointer('a/b'), 'a~1b');
  assert.equal(escapePointer('a~b'), 'a~0b');
  assert.equal(escapePointer('~1'), '~01');
  assert.equal(escapePointer('/~'), '~1~0');
  assert.equal(escapePointer('//~~'), '~1~1~0~0');
});

test('each constructor makes a DomainError of its kind, with its detail and field errors', () => {
  const errors = [{ path: '/ports/1', message: 'must be a port from 1 to 65535 and the protocol http or tcp, like 8888/http' }];
  const cases: [DomainError, DomainError['kind'], string, unknown[]][] = [
    [invalid('The template is not valid.', errors), 'invalid', 'The template is not valid.', errors],
    [notFound('template'), 'not-found', 'No template with that id is visible to this key.', []],
    [forbidden('Only the owner may change it.'), 'forbidden', 'Only the owner may change it.', []],
    [conflict('Name taken.'), 'conflict', 'Name taken.', []],
    [conflict('Name taken.', errors), 'conflict', 'Name taken.', errors],
  ];
  for (const [error, kind, message, fieldErrors] of cases) {
    assert.equal(error instanceof DomainError, true);
    assert.equal(error instanceof Error, true);
    assert.equal(error.name, 'DomainError');
    assert.equal(error.kind, kind);
    assert.equal(error.message, message);
    assert.deepEqual(error.errors, fieldErrors);
  }
});
