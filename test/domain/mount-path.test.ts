import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MOUNT_PATH_PATTERN, mountPathProblem } from '../../src/domain/mount-path.ts';

// volumeMountPath is a normalised absolute path below the root, ≤ 255 chars (the length is the
// schema's): no empty, "." or ".." segment, so "/." and "//" (which mean "/") and "/a/" are refused.

const RELATIVE = 'must be an absolute path (start with "/")';
const ROOT = 'must not be the root directory "/"';
const DOTDOT = 'must not contain a ".." segment';
const EMPTY = 'must not contain an empty segment ("//", or a "/" at the end)';
const DOT = 'must not contain a "." segment';
const CONTROL = 'must not contain control characters';

test('normalised absolute paths below the root have no problem, including names that merely contain dots', () => {
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
    '/.a',
    '/a.',
    '/.hidden/dir',
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

test('the root directory is refused, however it is spelled: "/", "//", "/.", "/./", "/.//."', () => {
  for (const path of ['/', '//', '///', '/.', '/./', '/.//.', '/./.']) assert.equal(mountPathProblem(path), ROOT, path);
});

test('a ".." segment is refused anywhere in the path', () => {
  for (const path of ['/..', '/../workspace', '/a/../b', '/a/b/..', '/a/b/../../c', '/./..', '//..']) {
    assert.equal(mountPathProblem(path), DOTDOT, path);
  }
});

test('an empty segment is refused: a doubled "/" anywhere, or a "/" at the end', () => {
  for (const path of ['//a', '/a//b', '/a/', '/a/b/', '/a///b', '/a/./']) assert.equal(mountPathProblem(path), EMPTY, path);
});

test('a "." segment is refused anywhere in the path', () => {
  for (const path of ['/./a', '/a/./b', '/a/.', '/a/./.']) assert.equal(mountPathProblem(path), DOT, path);
});

test('C0 control characters and DEL are refused anywhere in the path', () => {
  for (const path of ['/a\u0000b', '/a\nb', '/a\tb', '/a\rb', '/\u001f', '/workspace\u007f', '/\u0001workspace']) {
    assert.equal(mountPathProblem(path), CONTROL, JSON.stringify(path));
  }
});

test('the first problem found is the one reported: relative, root, "..", empty, ".", then control characters', () => {
  assert.equal(mountPathProblem('../a\n'), RELATIVE);
  assert.equal(mountPathProblem('/./'), ROOT);
  assert.equal(mountPathProblem('/a//../\n'), DOTDOT);
  assert.equal(mountPathProblem('/a//./b'), EMPTY);
  assert.equal(mountPathProblem('/./a\n'), DOT);
  assert.equal(mountPathProblem('/..\u0000'), CONTROL); // "..\u0000" is not a ".." segment
});

test('the rule and its regular expression agree on every path made of slashes, dots, letters and control characters', () => {
  const pattern = new RegExp(MOUNT_PATH_PATTERN);
  const path = fc
    .array(fc.constantFrom('/', '/', '.', '..', 'a', 'b.', ' ', 'é', '\u0000', '\n', '\u007f', '~'), { maxLength: 12 })
    .map((parts) => parts.join(''));
  fc.assert(
    fc.property(path, (p) => {
      assert.equal(pattern.test(p), mountPathProblem(p) === undefined, `${JSON.stringify(p)}: ${mountPathProblem(p)}`);
    }),
    { numRuns: 20_000 },
  );
});
