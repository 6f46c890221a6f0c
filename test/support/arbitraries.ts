import fc from 'fast-check';
import { nameProblem } from '../../src/domain/name.ts';

// Generators of requests for property-based tests: valid templates drawn from the rules of src/domain/template.ts, and the
// ways a request can be wrong.

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what names may not hold
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const lower = fc.stringMatching(/^[a-z0-9]{1,8}$/);
/** Free text: anything but NUL, which free-text fields refuse (PostgreSQL can't store it). */
const text = (constraints: fc.StringConstraints) => fc.string(constraints).map((s) => s.replaceAll('\u0000', ''));

export const name = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 120 })
  .filter((s) => s.trim().length > 0 && nameProblem(s) === undefined);

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

/** JSON text sent as it is: numbers JSON.stringify can't write (1e400 is Infinity, then null), nesting too deep to build. */
export class RawJson {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}

/** `value` as the JSON text of a body, with each RawJson in it written as it is. */
export function jsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v) => (v instanceof RawJson ? `\u0001raw-json-${raws.push(v.text) - 1}\u0001` : v));
  return text.replace(/"\\u0001raw-json-([0-9]+)\\u0001"/g, (_, i: string) => raws[Number(i)] as string);
}

/** Characters no text may hold: NUL, and UTF-16 surrogates without their pair. */
export const UNSTORABLE = ['\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d'] as const;

/** Plain text with one unstorable character somewhere in it. */
export const hostileText = fc
  .tuple(fc.string({ maxLength: 12 }), fc.constantFrom(...UNSTORABLE), fc.string({ maxLength: 12 }))
  .map(([before, bad, after]) => before + bad + after);

/** Numbers no field accepts: beyond every bound, or beyond a double (they parse as Infinity). */
export const hugeNumber = fc
  .constantFrom('1e400', '-1e400', '1e309', '123456789012345678901234567890', '9007199254740993', '1e20', '-1e20', '4e9')
  .map((text) => new RawJson(text));

/** Numbers with a fraction, as JSON text: an integer field takes none of them. */
export const fraction = fc.oneof(
  fc.constantFrom('0.5', '1.5', '-0.5', '1.0000000000000002', '4.9e-324', '2.55e1').map((text) => new RawJson(text)),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).filter((d) => !Number.isInteger(d)),
);

/** A value nested deeper than any field goes (thousands of levels), around something harmless or hostile. */
export const deepNesting = fc
  .tuple(
    fc.integer({ min: 2, max: 30_000 }),
    fc.constantFrom('array', 'object'),
    fc.constantFrom('1', '"x"', '{}', '{"__proto__":1}', '{"constructor":{"prototype":{}}}', '"\\u0000"', '"\\ud800"', '{"\\udc00":1}'),
  )
  .map(([depth, kind, inner]) =>
    kind === 'array'
      ? new RawJson(`${'['.repeat(depth)}${inner}${']'.repeat(depth)}`)
      : new RawJson(`${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`),
  );

// Wrong values, by kind: of another JSON type, beyond a bound, unstorable text, numbers JSON can hold but no field
// takes, nesting deeper than any field goes.
const notString = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
  hugeNumber,
  deepNesting,
);
const notInteger = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fraction,
  hugeNumber.filter((n) => n.text.startsWith('1e4') || n.text.startsWith('-1e4') || n.text === '1e309'),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
  deepNesting,
);
const notNumber = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('1e400', '-1e400', '1e309').map((text) => new RawJson(text)),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
  deepNesting,
);
const notBoolean = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.constant(null),
  fc.array(fc.boolean(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
  hugeNumber,
  deepNesting,
);
const notStringArray = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.object({ maxDepth: 1 }),
  fc.array(fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)), { minLength: 1, maxLength: 3 }),
  hostileText.map((t) => [t]),
  deepNesting,
);
/** An integer field bounded by [min, max]: any value that is not one of those integers. */
const outside = (min: number, max: number) =>
  fc.oneof(notInteger, hugeNumber, fc.integer({ max: min - 1 }), fc.integer({ min: max + 1, max: max + 1_000_000 }));
const badName = fc.oneof(
  notString,
  fc.constant(''),
  fc.constant('   '),
  fc.string({ minLength: 256, maxLength: 400 }).filter((s) => s.trim().length > 255),
  fc.constantFrom('a\u0000b', 'ta\tb', 'new\nline', 'zero\u200bwidth', 'evil\u202etxt', '\u2060', 'p\u0430ypal'),
  hostileText,
);

/** Values that are wrong for a field of a template body. */
export const wrongValues: Record<string, fc.Arbitrary<unknown>> = {
  name: badName,
  imageName: fc.oneof(
    notString,
    fc.constant(''),
    fc.constantFrom('UPPER/case', 'a b', 'ubuntu:', ':tag', 'a//b', 'ubuntu@sha256:xyz', `ubuntu:${'t'.repeat(129)}`),
    fc.string({ minLength: 1025, maxLength: 1100 }),
    hostileText,
  ),
  category: fc.oneof(
    notString,
    fc.string().filter((s) => !['NVIDIA', 'AMD', 'CPU'].includes(s)),
    hostileText,
  ),
  containerDiskInGb: outside(1, 16384),
  volumeInGb: outside(0, 16384),
  volumeMountPath: fc.oneof(
    notString,
    fc.constantFrom('/', '//', 'relative', '/a/../b', '/..', '', '/.', '/./', '/a/./b', '/a//b', '/a/', '//a', '/a/.'),
    fc.string({ minLength: 1 }).filter((s) => !s.startsWith('/')),
    hostileText.map((t) => `/mnt/${t}`),
  ),
  containerRegistryAuthId: fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.array(fc.string(), { maxLength: 1 }),
    fc.string({ minLength: 129, maxLength: 200 }),
    hostileText,
    hugeNumber,
    deepNesting,
  ),
  dockerEntrypoint: fc.oneof(notStringArray, fc.array(fc.constant('x'), { minLength: 65, maxLength: 70 })),
  dockerStartCmd: fc.oneof(notStringArray, fc.constant(['x'.repeat(4097)])),
  env: fc.oneof(
    fc.string(),
    fc.integer(),
    fc.constant(null),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.stringMatching(/^[0-9-][A-Za-z0-9-]{0,10}$/).map((k) => ({ [k]: 'v' })),
    fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), hugeNumber, deepNesting).map((v) => ({ OK_NAME: v })),
    hostileText.map((t) => ({ OK_NAME: t })),
    hostileText.map((t) => ({ [t]: 'v' })),
    deepNesting,
  ),
  ports: fc.oneof(
    notStringArray,
    fc.constantFrom(['0/tcp'], ['65536/http'], ['80/udp'], ['80'], ['http/80'], ['80/http', '80/http'], [' 80/http']),
    fc.integer({ min: 65536, max: 999999 }).map((n) => [`${n}/tcp`]),
  ),
  readme: fc.oneof(
    notString,
    fc.integer({ min: 102401, max: 300000 }).map((n) => 'r'.repeat(n)),
    hostileText.map((t) => `# Readme\n\n${t}`),
  ),
  isPublic: notBoolean,
  isServerless: notBoolean,
};

/** A valid id's shape, as path parameters and references take them. */
export const idLike = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);

/** A valid `POST /v1/endpoints` body, for the template `templateId`. */
export const validEndpoint = (templateId: fc.Arbitrary<string>) =>
  fc
    .record({ name, templateId, workersMin: fc.integer({ min: 0, max: 1000 }), workersMax: fc.integer({ min: 1, max: 1000 }) })
    .map((b) => ({ ...b, workersMax: Math.max(b.workersMin, b.workersMax, 1) }))
    .chain((b) =>
      fc.constantFrom<{ name: string; templateId: string; workersMin?: number; workersMax?: number }>(b, {
        name: b.name,
        templateId: b.templateId,
      }),
    );

export const wrongEndpointValues: Record<string, fc.Arbitrary<unknown>> = {
  name: badName,
  templateId: fc.oneof(notString, fc.constant(''), fc.string({ minLength: 65, maxLength: 100 }), hostileText),
  workersMin: outside(0, 1000),
  workersMax: outside(1, 1000),
};

/** A valid `POST /v1/containerregistryauth` body; its name is made unique by the caller. */
export const validRegistryAuth = fc.record({
  name,
  username: fc.string({ minLength: 1, maxLength: 60 }).filter((s) => !CONTROL.test(s)),
  password: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }),
});

export const wrongRegistryAuthValues: Record<string, fc.Arbitrary<unknown>> = {
  name: badName,
  username: fc.oneof(
    notString,
    fc.constant(''),
    fc.string({ minLength: 256, maxLength: 300 }),
    fc.constantFrom('a\tb', 'a\nb'),
    hostileText,
  ),
  password: fc.oneof(notString, fc.constant(''), fc.constant('p'.repeat(16385)), fc.constant('😀'.repeat(16385)), hostileText),
};

/** A valid usage report; each one's usageId is made unique by the caller. */
export const validUsage = fc.record({
  usageId: fc.stringMatching(/^[A-Za-z0-9._:-]{1,100}$/),
  runtimeInMin: fc.integer({ min: 0, max: 1_000_000_000 }),
  earned: fc.oneof(fc.double({ min: 0, max: 1_000_000_000, noNaN: true }), fc.integer({ min: 0, max: 1_000_000_000 })),
});

export const wrongUsageValues: Record<string, fc.Arbitrary<unknown>> = {
  usageId: fc.oneof(
    notString,
    fc.constant(''),
    fc.string({ minLength: 129, maxLength: 200 }),
    fc.constantFrom('a b', 'a/b', 'é', 'a\nb'),
    hostileText,
  ),
  runtimeInMin: outside(0, 1_000_000_000),
  earned: fc.oneof(notNumber, fc.double({ max: -Number.MIN_VALUE, noNaN: true }), fc.double({ min: 1_000_000_001, noNaN: true })),
};

export const wrongRollbackValues: Record<string, fc.Arbitrary<unknown>> = {
  revision: outside(1, 2 ** 31 - 1),
};

/** A valid progress report of a release. */
export const validProgress = fc
  .record({
    status: fc.constantFrom('rolling', 'completed', 'failed'),
    workersUpdated: fc.integer({ min: 0, max: 100_000 }),
    workersTotal: fc.integer({ min: 0, max: 100_000 }),
  })
  .map((p) => ({ ...p, workersUpdated: Math.min(p.workersUpdated, p.workersTotal) }));

export const wrongProgressValues: Record<string, fc.Arbitrary<unknown>> = {
  status: fc.oneof(notString, fc.constantFrom('pending', 'superseded', 'ROLLING', ''), hostileText),
  workersUpdated: outside(0, 100_000),
  workersTotal: outside(0, 100_000),
};

/** A valid `PATCH /v1/endpoints/{id}` body: a name (made unique by the caller), and both worker counts or neither. */
export const validEndpointUpdate = fc
  .record({
    name,
    workers: fc.option(fc.tuple(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 1000 })), { nil: undefined }),
  })
  .map(({ name, workers }) => ({
    name,
    ...(workers ? { workersMin: workers[0], workersMax: Math.max(workers[0], workers[1]) } : {}),
  }));

/** Values an endpoint update refuses alone, the server-set fields sent back with a value they never hold included. */
export const wrongEndpointUpdateValues: Record<string, fc.Arbitrary<unknown>> = {
  ...wrongEndpointValues,
  id: fc.oneof(notString, fc.string({ maxLength: 15 }), fc.string({ minLength: 65, maxLength: 100 }), hostileText),
  version: fc.oneof(notInteger, fc.integer({ max: 0 }), fc.integer({ min: 2 ** 40, max: Number.MAX_SAFE_INTEGER })),
  createdAt: fc.oneof(notString, fc.string({ maxLength: 64 }), fc.constantFrom('2000-01-01T00:00:00Z', 'now', ''), hostileText),
  updatedAt: fc.oneof(notString, fc.string({ maxLength: 64 }), fc.constantFrom('1999-12-31T23:59:59.999Z', 'today'), hostileText),
};

/** A secret's name as the path takes it: an env name of at most 128 characters. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** A valid secret name; the fuzzer's own start with FUZZ, so these (lower-case first) never touch them. */
export const secretName = fc.stringMatching(/^[a-z_][A-Za-z0-9_]{0,40}$/);

/** A valid `PUT /v1/secrets/{name}` body: any text but NUL, up to 32,768 characters (of any size in UTF-8). */
export const validSecret = fc.record({
  value: fc.oneof(
    text({ unit: 'binary', minLength: 1, maxLength: 200 }).filter((v) => v.length > 0),
    fc.constantFrom('x'.repeat(32768), 'é'.repeat(32768), '😀'.repeat(32768), ' ', '{{ secret.OTHER }}'),
  ),
});

export const wrongSecretValues: Record<string, fc.Arbitrary<unknown>> = {
  value: fc.oneof(notString, fc.constantFrom('', 'x'.repeat(32769), 'é'.repeat(32769), '😀'.repeat(32769)), hostileText),
};

/** Values `POST /v1/templates/{id}/resolve` refuses: an account name of no account too (a 400 naming /account). */
export const wrongResolveValues: Record<string, fc.Arbitrary<unknown>> = {
  account: fc.oneof(
    notString,
    fc.constantFrom('', 'nosuchaccount', 'alice2', ' alice', 'alice '),
    fc.string({ minLength: 129, maxLength: 200 }),
    hostileText,
  ),
  revision: fc.oneof(
    notInteger,
    fc.integer({ max: 0 }),
    fc.constantFrom('-1e400', '-1e20', '-0.5').map((t) => new RawJson(t)),
  ),
};

/** Every field some request body knows: an "unknown" field drawn is none of them. */
const KNOWN_FIELDS = new Set([
  ...Object.keys(wrongValues),
  ...Object.keys(wrongEndpointUpdateValues),
  ...Object.keys(wrongRegistryAuthValues),
  ...Object.keys(wrongUsageValues),
  ...Object.keys(wrongRollbackValues),
  ...Object.keys(wrongProgressValues),
  ...Object.keys(wrongSecretValues),
  ...Object.keys(wrongResolveValues),
]);

/** A field name no schema knows. */
export const unknownField = fc
  .oneof(fc.string({ minLength: 1, maxLength: 20 }), hostileText)
  .filter((s) => !KNOWN_FIELDS.has(s) && !['__proto__', 'constructor', 'prototype'].includes(s));

/**
 * Text as it would be percent-encoded in a URL, where a lone surrogate is written as the bytes it would have in
 * UTF-8 if it had any (%ED%A0%80): invalid UTF-8, which is how such text reaches a server.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const paired =
      (unit >= 0xd800 && unit <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) ||
      (unit >= 0xdc00 && unit <= 0xdfff && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800);
    if (unit >= 0xd800 && unit <= 0xdfff && !paired) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else if (unit >= 0xd800 && unit <= 0xdbff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else {
      // Also the characters encodeURIComponent leaves, which a URL parser may escape on its own ("'" in a query).
      out += encodeURIComponent(text[i] as string).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    }
  }
  return out;
}

/** Percent-encodings that are not UTF-8: a lone byte, an overlong form, a surrogate, past U+10FFFF, cut short, not hex. */
export const badPercentEncoding = fc.constantFrom('%FF', '%C0%AF', '%ED%A0%80', '%ED%BF%BF', '%F4%90%80%80', '%E0%A4%A', '%', '%zz', '%C3');

export { escapePointer } from '../../src/domain/errors.ts';
