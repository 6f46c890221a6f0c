import assert from 'node:assert/strict';
import { test } from 'node:test';
import { imageReferenceProblem } from '../../src/domain/image-reference.ts';

// The image reference's rule: "a valid image reference (optional registry host[:port], lowercase repository path,
// optional :tag ≤ 128 chars, optional @sha256: digest)".

const HEX64 = '0123456789abcdef'.repeat(4);
const TAG_MESSAGE = 'the tag may hold only letters, digits, "_", "." and "-", and must not start with "." or "-"';
const DIGEST_MESSAGE = 'the digest must be "sha256:" followed by 64 lowercase hex digits';
const EMPTY_COMPONENT = 'the repository path must not have an empty component';
const LOWERCASE = 'repository names must be lowercase';
const component = (c: string) =>
  `"${c}" is not a valid repository name component (lowercase letters, digits and single separators . _ __ -)`;
const host = (h: string) => `"${h}" is not a valid registry host[:port]`;

test('valid references have no problem: hosts, ports, IPv6, tags, digests and every separator', () => {
  const valid = [
    'ubuntu',
    'ubuntu:22.04',
    'library/ubuntu',
    'docker.io/library/ubuntu:22.04',
    'runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04',
    'localhost/a',
    'localhost:5000/a/b',
    'localhost:5000/a/b:latest',
    '[::1]:5000/x',
    '[::1]/x',
    '[2001:db8::1]:443/team/img:v1',
    'registry.example.com/team/img',
    `registry.example.com/team/img@sha256:${HEX64}`,
    `registry.example.com/team/img:v1@sha256:${HEX64}`,
    `img@sha256:${HEX64}`,
    'registry.example.com:65535/img',
    'Registry.Example.COM/team/img', // the host may have capitals; only the repository path must be lowercase
    'my-registry.internal:5000/img',
    'a/b/c/d/e/f',
    'team/a.b_c__d-e--f/g0.h1', // a first component with a dot would be a host
    'a_b/c__d/e-f/g--h/i.j',
    'a0/0a/00',
    `img:${'a'.repeat(128)}`, // a tag of exactly 128 characters
    'img:_underscore',
    'img:UPPER_case.9-x',
    'img:1',
  ];
  for (const reference of valid) assert.equal(imageReferenceProblem(reference), undefined, reference);
});

test('an empty reference must not be empty', () => {
  assert.equal(imageReferenceProblem(''), 'must not be empty');
});

test('capitals in the repository path are called out as such, wherever they are', () => {
  for (const reference of [
    'Ubuntu',
    'ubuntU:22.04',
    'library/Ubuntu:22.04',
    'docker.io/Library/ubuntu',
    'localhost:5000/a/B',
    `Img@sha256:${HEX64}`,
    'Docker.io', // one component: a repository, not a host
    'My_Image-Name',
  ]) {
    assert.equal(imageReferenceProblem(reference), LOWERCASE, reference);
  }
});

test('a tag of 129 characters is too long, whatever it holds', () => {
  assert.equal(imageReferenceProblem(`img:${'a'.repeat(129)}`), 'the tag must be at most 128 characters');
  assert.equal(imageReferenceProblem(`img:.${'a'.repeat(128)}`), 'the tag must be at most 128 characters');
  assert.equal(imageReferenceProblem(`docker.io/a/img:${'a'.repeat(129)}@sha256:${HEX64}`), 'the tag must be at most 128 characters');
});

test('a tag that is empty, starts with "." or "-", or holds other characters is refused', () => {
  for (const reference of ['img:', 'img:.hidden', 'img:-dash', 'img:a+b', 'img:ü', 'img:a b', 'localhost:5000/img:v!']) {
    assert.equal(imageReferenceProblem(reference), TAG_MESSAGE, reference);
  }
});

test('a digest must be sha256 and exactly 64 lowercase hex digits', () => {
  for (const reference of [
    'img@',
    'img@sha256:',
    'img@sha256:abc',
    `img@sha256:${HEX64.slice(1)}`, // 63
    `img@sha256:${HEX64}0`, // 65
    `img@sha256:${HEX64.toUpperCase()}`,
    `img@sha256:${HEX64.slice(1)}g`,
    `img@sha512:${HEX64}`,
    `img@${HEX64}`,
    `img@sha256:${HEX64}@sha256:${HEX64}`,
    `img@sha256:${HEX64}:tag`,
  ]) {
    assert.equal(imageReferenceProblem(reference), DIGEST_MESSAGE, reference);
  }
});

test('an empty path component is refused: leading, trailing or doubled slashes', () => {
  for (const reference of ['a//b', 'a/', '/a', 'docker.io/', 'docker.io//a', 'localhost:5000/a//b:tag', '/']) {
    assert.equal(imageReferenceProblem(reference), EMPTY_COMPONENT, reference);
  }
  // A reference that is only a tag or a digest has an empty repository.
  assert.equal(imageReferenceProblem(':tag'), EMPTY_COMPONENT);
  assert.equal(imageReferenceProblem(`@sha256:${HEX64}`), EMPTY_COMPONENT);
});

test('a component with a doubled, leading or trailing separator, or a foreign character, is named in the message', () => {
  const cases: [string, string][] = [
    ['a___b', 'a___b'],
    ['a..b', 'a..b'],
    ['a.-b', 'a.-b'],
    ['a_-b', 'a_-b'],
    ['-a', '-a'],
    ['a-', 'a-'],
    ['.a', '.a'],
    ['team/_img', '_img'],
    ['team/img+x', 'img+x'],
    ['team/imäge', 'imäge'],
    ['docker.io/team/a..b:1', 'a..b'],
    ['ubuntu:22.04:x', 'ubuntu:22.04'], // only the last colon starts a tag
    ['A..B', 'A..B'], // lowercasing does not make it valid, so this is not about capitals
  ];
  for (const [reference, bad] of cases) assert.equal(imageReferenceProblem(reference), component(bad), reference);
});

test('a first component with a dot or a colon, or localhost, is a registry host and must be a valid host[:port]', () => {
  const cases: [string, string][] = [
    ['bad_host.com/x', 'bad_host.com'],
    ['-bad.com/x', '-bad.com'],
    ['bad-.com/x', 'bad-.com'],
    ['a..com/x', 'a..com'],
    ['host.com:123456/x', 'host.com:123456'], // at most 5 digits of port
    ['host.com:/x', 'host.com:'],
    ['host.com:port/x', 'host.com:port'],
    ['localhost:/x', 'localhost:'],
    ['[::g]/x', '[::g]'],
    ['[]:5000/x', '[]:5000'],
    ['::1/x', '::1'],
  ];
  for (const [reference, bad] of cases) assert.equal(imageReferenceProblem(reference), host(bad), reference);
});

test('the first problem found is the one reported: the digest, then the tag, then the host, then the path', () => {
  assert.equal(imageReferenceProblem('Bad_Host.com/Img:.x@sha256:x'), DIGEST_MESSAGE);
  assert.equal(imageReferenceProblem(`Bad_Host.com/Img:.x@sha256:${HEX64}`), TAG_MESSAGE);
  assert.equal(imageReferenceProblem(`bad_host.com/Img:x@sha256:${HEX64}`), host('bad_host.com'));
  assert.equal(imageReferenceProblem(`host.com/a//Img:x@sha256:${HEX64}`), EMPTY_COMPONENT);
  assert.equal(imageReferenceProblem(`host.com/Img//a:x@sha256:${HEX64}`), LOWERCASE);
});
