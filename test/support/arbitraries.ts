import fc from 'fast-check';

// Generators of requests for property-based tests: valid templates drawn from behaviour.md's rules, and the
// ways a request can be wrong.

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what names may not hold
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const lower = fc.stringMatching(/^[a-z0-9]{1,8}$/);
/** Free text: anything but NUL, which free-text fields refuse (PostgreSQL can't store it). */
const text = (constraints: fc.StringConstraints) => fc.string(constraints).map((s) => s.replaceAll('\u0000', ''));

export const name = fc.string({ unit: 'binary', minLength: 1, maxLength: 120 }).filter((s) => s.trim().length > 0 && !CONTROL.test(s));

const component = (separators: string[]) =>
  fc
    .tuple(lower, fc.array(fc.tuple(fc.constantFrom(...separators), lower), { maxLength: 2 }))
    .map(([head, rest]) => head + rest.map(([sep, part]) => sep + part).join(''));
const pathComponent = component(['.', '_', '__', '-', '--']);
// Without a registry host, a first component with a "." would be read as one (as Docker reads it).
const firstComponent = component(['_', '__', '-', '--']);

export const imageName = fc
  .record({
    host: fc.option(fc.constantFrom('ghcr.io', 'registry.example.com:5000', 'localhost', 'localhost:5000', 'docker.io'), {
      nil: undefined,
    }),
    path: fc.tuple(firstComponent, fc.array(pathComponent, { maxLength: 2 })).map(([first, rest]) => [first, ...rest]),
    tag: fc.option(fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,30}$/), { nil: undefined }),
    digest: fc.option(fc.stringMatching(/^[a-f0-9]{64}$/), { nil: undefined }),
  })
  .map(
    ({ host, path, tag, digest }) =>
      `${host ? `${host}/` : ''}${path.join('/')}${tag ? `:${tag}` : ''}${digest ? `@sha256:${digest}` : ''}`,
  );

const port = fc.tuple(fc.integer({ min: 1, max: 65535 }), fc.constantFrom('http', 'tcp')).map(([n, p]) => `${n}/${p}`);

/** Every optional field of a create body, each valid. */
export const optionalFields = {
  category: fc.constantFrom('NVIDIA', 'AMD', 'CPU'),
  containerDiskInGb: fc.integer({ min: 1, max: 16384 }),
  volumeInGb: fc.integer({ min: 0, max: 16384 }),
  volumeMountPath: fc
    .array(
      fc.stringMatching(/^[a-z0-9_][a-z0-9_.-]{0,15}$/).filter((s) => s !== '..' && s !== '.'),
      { minLength: 1, maxLength: 4 },
    )
    .map((parts) => `/${parts.join('/')}`),
  // Any other value must name a registry auth of the owner (test/http/registry-auths.test.ts).
  containerRegistryAuthId: fc.constant(''),
  dockerEntrypoint: fc.array(text({ maxLength: 50 }), { maxLength: 5 }),
  dockerStartCmd: fc.array(text({ maxLength: 50 }), { maxLength: 5 }),
  // "__proto__" is a valid name, but JSON parsing refuses it for safety (a 400 of its own, tested apart).
  env: fc.dictionary(
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,30}$/).filter((k) => k !== '__proto__'),
    text({ unit: 'binary', maxLength: 100 }),
    { maxKeys: 10 },
  ),
  ports: fc.uniqueArray(port, { maxLength: 10 }),
  readme: text({ unit: 'binary', maxLength: 500 }),
  isPublic: fc.boolean(),
  isServerless: fc.boolean(),
};

export const validCreate = fc.record({ name, imageName, ...optionalFields }, { requiredKeys: ['name', 'imageName'] });

const { category: _c, isServerless: _s, ...updatable } = optionalFields;
export const validUpdate = fc.record({ name, imageName, ...updatable }, { requiredKeys: [] });

/** Values that are wrong for a field: of another JSON type, or beyond a bound. */
export const wrongValues: Record<string, fc.Arbitrary<unknown>> = (() => {
  const notString = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.object({ maxDepth: 1 }),
  );
  const notInteger = fc.oneof(
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
    fc.array(fc.integer(), { maxLength: 2 }),
    fc.object({ maxDepth: 1 }),
  );
  const notBoolean = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.constant(null),
    fc.array(fc.boolean(), { maxLength: 2 }),
    fc.object({ maxDepth: 1 }),
  );
  const notStringArray = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.object({ maxDepth: 1 }),
    fc.array(fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)), { minLength: 1, maxLength: 3 }),
  );
  return {
    name: fc.oneof(
      notString,
      fc.constant(''),
      fc.constant('   '),
      fc.string({ minLength: 256, maxLength: 400 }).filter((s) => s.trim().length > 255),
      fc.constantFrom('a\u0000b', 'ta\tb', 'new\nline'),
    ),
    imageName: fc.oneof(
      notString,
      fc.constant(''),
      fc.constantFrom('UPPER/case', 'a b', 'ubuntu:', ':tag', 'a//b', 'ubuntu@sha256:xyz', `ubuntu:${'t'.repeat(129)}`),
      fc.string({ minLength: 1025, maxLength: 1100 }),
    ),
    category: fc.oneof(
      notString,
      fc.string().filter((s) => !['NVIDIA', 'AMD', 'CPU'].includes(s)),
    ),
    containerDiskInGb: fc.oneof(notInteger, fc.integer({ max: 0 }), fc.integer({ min: 16385 })),
    volumeInGb: fc.oneof(notInteger, fc.integer({ max: -1 }), fc.integer({ min: 16385 })),
    volumeMountPath: fc.oneof(
      notString,
      fc.constantFrom('/', '//', 'relative', '/a/../b', '/..', ''),
      fc.string({ minLength: 1 }).filter((s) => !s.startsWith('/')),
    ),
    containerRegistryAuthId: fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 1 }),
      fc.string({ minLength: 129, maxLength: 200 }),
    ),
    dockerEntrypoint: fc.oneof(notStringArray, fc.array(fc.constant('x'), { minLength: 65, maxLength: 70 })),
    dockerStartCmd: fc.oneof(notStringArray, fc.constant(['x'.repeat(4097)])),
    env: fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.stringMatching(/^[0-9-][A-Za-z0-9-]{0,10}$/).map((k) => ({ [k]: 'v' })),
      fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)).map((v) => ({ OK_NAME: v })),
    ),
    ports: fc.oneof(
      notStringArray,
      fc.constantFrom(['0/tcp'], ['65536/http'], ['80/udp'], ['80'], ['http/80'], ['80/http', '80/http'], [' 80/http']),
      fc.integer({ min: 65536, max: 999999 }).map((n) => [`${n}/tcp`]),
    ),
    readme: fc.oneof(
      notString,
      fc.integer({ min: 102401, max: 300000 }).map((n) => 'r'.repeat(n)),
    ),
    isPublic: notBoolean,
    isServerless: notBoolean,
  };
})();

/** A field name no schema knows. */
export const unknownField = fc
  .string({ minLength: 1, maxLength: 20 })
  .filter((s) => !(s in wrongValues) && !['__proto__', 'constructor', 'prototype'].includes(s));

export { escapePointer } from '../../src/domain/errors.ts';
