import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { imageReferenceProblem } from '../../src/domain/image-reference.ts';
import { mountPathProblem } from '../../src/domain/mount-path.ts';
import { nameProblem } from '../../src/domain/name.ts';
import { optionalFields, imageName as validImageName } from '../support/arbitraries.ts';

// The published document states imageName and volumeMountPath as patterns any JSON Schema validator can check; the
// server explains a refusal with the domain rules. Both must accept and refuse the very same values: here a plain
// validator that knows nothing of this service checks the schemas as published (openapi/podplate.json, which
// test/client/generated.test.ts keeps equal to what the app serves) against the domain rules.

const document = JSON.parse(readFileSync(new URL('../../openapi/podplate.json', import.meta.url), 'utf8'));
const published = document.components.schemas.TemplateCreateInput.properties;
const ajv = new Ajv2020({ strict: false });
// Only the pattern is compared: the lengths are bounds of their own, which the domain rules leave to the schema.
const withoutLengths = ({ minLength: _min, maxLength: _max, default: _default, ...schema }: Record<string, unknown>) => schema;
const imageNameValid = ajv.compile(withoutLengths(published.imageName));
const mountPathValid = ajv.compile(withoutLengths(published.volumeMountPath));

const RUNS = 20_000;
const HEX64 = '0123456789abcdef'.repeat(4);

/** Strings made of pieces that matter to a grammar, so that most are near the line between valid and not. */
const assembled = (pieces: string[], maxLength = 12) =>
  fc.array(fc.constantFrom(...pieces), { minLength: 0, maxLength }).map((parts) => parts.join(''));

/** A valid value with one character inserted, removed or replaced. */
const mutated = (valid: fc.Arbitrary<string>, alphabet: string[]) =>
  fc.tuple(valid, fc.nat(), fc.constantFrom('insert', 'remove', 'replace'), fc.constantFrom(...alphabet)).map(([value, at, how, char]) => {
    const i = value.length === 0 ? 0 : at % value.length;
    if (how === 'insert') return value.slice(0, i) + char + value.slice(i);
    if (how === 'remove') return value.slice(0, i) + value.slice(i + 1);
    return value.slice(0, i) + char + value.slice(i + 1);
  });

const imagePieces = [
  ...['a', 'z', '0', '9', 'A', 'Z', 'ab', 'x1', 'é', ' ', '\n', '+'],
  ...['.', '..', '_', '__', '___', '-', '--', '/', '//', ':', '::', '@', 'sha256:', HEX64, HEX64.slice(1)],
  ...['localhost', 'LOCALHOST', 'docker.io', 'Host.Example', 'bad_host.com', '[', ']', '[::1]', '[abc]', ':5000', ':123456'],
];
const imageAlphabet = ['a', 'A', '0', '.', '_', '-', '/', ':', '@', '[', ']', ' ', 'é', '\u0000'];

const pathPieces = ['/', '//', '.', '..', '...', 'a', 'B', 'my dir', '~', 'é', '名前', '\\', '\n', '\t', '\u0000', '\u007f', '\u0085', ' '];
const pathAlphabet = ['/', '.', 'a', ' ', '\u0000', '\n', '\u007f', '\u00e9'];

test('the published imageName pattern accepts exactly the image references the domain rule accepts', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        validImageName,
        mutated(validImageName, imageAlphabet),
        assembled(imagePieces),
        fc.string({ maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 20 }),
      ),
      (reference) => {
        const rule = imageReferenceProblem(reference) === undefined;
        assert.equal(imageNameValid(reference), rule, `${JSON.stringify(reference)}: ${imageReferenceProblem(reference)}`);
      },
    ),
    { numRuns: RUNS },
  );
});

test('the published volumeMountPath pattern accepts exactly the mount paths the domain rule accepts', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        optionalFields.volumeMountPath,
        mutated(optionalFields.volumeMountPath, pathAlphabet),
        assembled(pathPieces),
        fc.string({ maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 20 }),
      ),
      (path) => {
        const rule = mountPathProblem(path) === undefined;
        assert.equal(mountPathValid(path), rule, `${JSON.stringify(path)}: ${mountPathProblem(path)}`);
      },
    ),
    { numRuns: RUNS },
  );
});

test('the examples of the domain tests get the same answer from the published patterns', () => {
  const images = [
    ['ubuntu', true],
    ['[::1]/x', true],
    ['[abc]:5000/x', true],
    ['[abc]/x', false], // no "." or ":": a repository component, and "[" is not allowed in one
    ['Registry.Example.COM/team/img', true],
    ['team/a.b_c__d-e--f/g0.h1', true],
    ['bad_host.com/x', false], // a host (it has a "."), and not a valid one, though it would be a valid component
    ['Docker.io', false],
    ['LOCALHOST/a', false],
    ['localhost:5000', true], // the repository "localhost", tag "5000"
    [`img:${'a'.repeat(128)}`, true],
    [`img:${'a'.repeat(129)}`, false],
    [`img@sha256:${HEX64}`, true],
    [`img@sha256:${HEX64}@sha256:${HEX64}`, false],
  ] as const;
  for (const [reference, valid] of images) {
    assert.equal(imageReferenceProblem(reference) === undefined, valid, reference);
    assert.equal(imageNameValid(reference), valid, reference);
  }
  const paths = [
    ['/workspace', true],
    ['/', false],
    ['///', false],
    ['//a', false],
    ['/.', false],
    ['/a/', false],
    ['/a/./b', false],
    ['/.a', true],
    ['/..', false],
    ['/a/../b', false],
    ['/..a', true],
    ['/a\nb', false],
    ['/mnt/ünïcødé/名前', true],
    ['relative', false],
  ] as const;
  for (const [path, valid] of paths) {
    assert.equal(mountPathProblem(path) === undefined, valid, path);
    assert.equal(mountPathValid(path), valid, path);
  }
});

test('the published text rules accept exactly what the HTTP layer and the server take: names, free text, env names', async () => {
  const { textProblem } = await import('../../src/http/plugins/text.ts');
  const name = ajv.compile({ type: 'string', pattern: published.name.pattern });
  const freeText = ajv.compile({ type: 'string', pattern: published.readme.pattern });
  const envName = ajv.compile({ type: 'string', ...published.env.propertyNames });
  // Pieces near each line: white space of every kind String.trim removes, control characters, surrogates alone and paired.
  const pieces = [
    '\u0430',
    '\u0394',
    '\u200b',
    '\u202e',
    '\u200d',
    '\ufe0f',
    ' ',
    '\u00a0',
    '\u3000',
    '\ufeff',
    '\u2028',
    '\t',
    '\n',
    '\u0000',
    '\u0085',
    '\u009f',
    'a',
    'é',
    '😀',
    '\ud800',
    '\udfff',
    '\ud83d',
  ];
  const text = assembled(pieces, 8);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what names may not hold
  const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
  fc.assert(
    fc.property(text, (s) => {
      assert.equal(freeText(s), textProblem(s) === undefined, JSON.stringify(s));
      // A name a write gives: the rule of domain/name.ts (which the server applies once it has trimmed the name).
      assert.equal(name(s), nameProblem(s) === undefined, JSON.stringify(s));
      if (name(s)) assert.ok(s.trim().length > 0 && !CONTROL.test(s) && textProblem(s) === undefined, JSON.stringify(s));
    }),
    { numRuns: RUNS },
  );
  assert.equal(envName('__proto__'), false, 'the one name a body may not hold for safety');
  assert.equal(envName('__proto'), true);
});
