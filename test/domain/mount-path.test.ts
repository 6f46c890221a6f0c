import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mountPathProblem } from '../../src/domain/mount-path.ts';

// behaviour.md: volumeMountPath is an "absolute path, ≤ 255 chars, no `..` segment, not `/`" (the length is the
// schema's). Empty segments ("//", a trailing "/") and "." segments are left out: that rule is being changed.

const RELATIVE = 'must be an absolute path (start with "/")';
const ROOT = 'must not be the root directory "/"';
const DOTDOT = 'must not contain a ".." segment';
const CONTROL = 'must not contain control characters';

test('absolute paths below the root have no problem, including names that merely contain dots', () => {
  for (const path of [
    '/workspace',
    '/a',
    '/a/b/c',
    '/data/my volume',
    '/mnt/ünïcødé/名前',
    '/a/.../b',
    '/a/..b',
    '/a/b..',
    '/...',
    '/..a',
    '/a-b_c.d~e',
    `/${'a'.repeat(254)}`,
  ]) {
    assert.equal(mountPathProblem(path), undefined, path);
  }
});

test('a path that does not start with "/" must be absolute, including the empty string', () => {
  for (const path of [
    '',
    'workspace',
    'workspace/',
    './workspace',
    '../workspace',
    '~/workspace',
    ' /workspace',
    '\\workspace',
    'C:/data',
  ]) {
    assert.equal(mountPathProblem(path), RELATIVE, JSON.stringify(path));
  }
});

test('the root directory is refused, however many slashes spell it', () => {
  for (const path of ['/', '///']) assert.equal(mountPathProblem(path), ROOT, path);
});

test('a ".." segment is refused anywhere in the path', () => {
  for (const path of ['/..', '/../workspace', '/a/../b', '/a/b/..', '/a/b/../../c']) {
    assert.equal(mountPathProblem(path), DOTDOT, path);
  }
});

test('C0 control characters and DEL are refused anywhere in the path', () => {
  for (const path of ['/a\u0000b', '/a\nb', '/a\tb', '/a\rb', '/\u001f', '/workspace\u007f', '/\u0001workspace']) {
    assert.equal(mountPathProblem(path), CONTROL, JSON.stringify(path));
  }
});

test('the first problem found is the one reported: relative, then root, then "..", then control characters', () => {
  assert.equal(mountPathProblem('../a\n'), RELATIVE);
  assert.equal(mountPathProblem('/a/../\n'), DOTDOT);
  assert.equal(mountPathProblem('/..\u0000'), CONTROL); // "..\u0000" is not a ".." segment
});
