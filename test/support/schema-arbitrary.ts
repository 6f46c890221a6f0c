import fc from 'fast-check';

// Values drawn from a JSON Schema as the OpenAPI document publishes it: what a client or fuzzer generated from the
// document may send. Covers the keywords the document uses; any other is an error, so that a new one is not ignored.

type Schema = Record<string, any>;

const KNOWN = new Set([
  ...['anyOf', 'type', 'properties', 'required', 'additionalProperties', 'propertyNames', 'maxProperties', 'not', 'const', 'enum'],
  ...['items', 'maxItems', 'minItems', 'uniqueItems', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'format'],
  ...['$ref', 'description', 'title', 'default', 'examples', 'example', 'writeOnly', 'readOnly', '$id'],
]);

/** Characters of every size in UTF-8 (1 to 4 bytes), white space of several kinds, and a few with meaning in JSON. */
const SAMPLES = ['a', 'Z', '0', ' ', '\u00a0', 'é', '€', '中', '𝄞', '😀', '"', '\\', '{', '/', '\u3000'];

/** One character (code point) of any plane: ASCII, the samples, or any other but a surrogate. */
const character = fc.oneof(
  fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)),
  fc.constantFrom(...SAMPLES),
  fc
    .integer({ min: 0x80, max: 0x10ffff })
    .filter((c) => c < 0xd800 || c > 0xdfff)
    .map((c) => String.fromCodePoint(c)),
);

/** Strings a `maxLength`/`minLength`/`pattern` schema allows: drawn from the pattern, from all of Unicode, and at the bound. */
function strings(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'date-time') {
    return fc.date({ min: new Date('1970-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }).map((d) => d.toISOString());
  }
  const { minLength = 0, maxLength = 1000 } = schema;
  const pattern = schema.pattern === undefined ? undefined : new RegExp(schema.pattern, 'u');
  const length = (s: string) => [...s].length;
  const fits = (s: string) => length(s) >= minLength && length(s) <= maxLength && (pattern === undefined || pattern.test(s));
  const choices: fc.Arbitrary<string>[] = [];
  // Any Unicode text, where the pattern takes free text (a pattern of a format is drawn from alone: few strings fit it).
  if (pattern === undefined || pattern.test('Free text: é € 中 😀.')) {
    // fast-check favours small code points, control characters among them: those the pattern refuses are dropped
    // rather than the whole string.
    const allowed = (c: string) => pattern === undefined || pattern.test(`x${c}x`);
    const text = fc.string({ unit: character, minLength, maxLength: Math.min(maxLength, 40) }).map((t) => [...t].filter(allowed).join(''));
    choices.push(text.filter(fits));
  }
  if (pattern) choices.push(fc.stringMatching(pattern).filter(fits));
  // At the bound, in characters of each size: where a byte count and a character count part.
  const atBound = SAMPLES.flatMap((c) => [c.repeat(maxLength), `x${c.repeat(maxLength - 1)}`]).filter(fits);
  if (maxLength <= 200_000 && atBound.length > 0) choices.push(fc.constantFrom(...atBound));
  return fc.oneof(...choices);
}

/**
 * An arbitrary of the values `schema` accepts, `$ref`s resolved in `document`. `overrides` replaces (or, with null,
 * leaves out) properties of the top-level object by name: for rules the document states in words only.
 */
export function arbitraryOf(
  schema: Schema,
  document: Schema,
  overrides: Record<string, fc.Arbitrary<unknown> | null> = {},
): fc.Arbitrary<unknown> {
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    return arbitraryOf(document.components.schemas[name], document, overrides);
  }
  for (const key of Object.keys(schema)) if (!KNOWN.has(key)) throw new Error(`schema keyword ${key} is not drawn from`);
  if (schema.anyOf) {
    const { anyOf, ...rest } = schema;
    return fc.oneof(...anyOf.map((choice: Schema) => arbitraryOf({ ...rest, ...choice }, document)));
  }
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type: string) => arbitraryOf({ ...schema, type }, document)));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 - 1 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case 'string':
      return strings(schema);
    case 'array': {
      const items = arbitraryOf(schema.items ?? {}, document);
      const constraints = { minLength: schema.minItems ?? 0, maxLength: schema.maxItems ?? 10 };
      return schema.uniqueItems
        ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
        : fc.array(items, constraints);
    }
    case 'object': {
      if (schema.properties) {
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, property] of Object.entries(schema.properties as Record<string, Schema>)) {
          const override = overrides[name];
          if (override === null) continue;
          record[name] = override ?? arbitraryOf(property, document);
        }
        const requiredKeys = (schema.required ?? []).filter((name: string) => name in record);
        return fc.record(record, { requiredKeys });
      }
      const names = schema.propertyNames ? strings(schema.propertyNames).filter((k) => k !== schema.propertyNames.not?.const) : fc.string();
      const values = arbitraryOf(schema.additionalProperties ?? {}, document);
      return fc.dictionary(names, values, { maxKeys: Math.min(schema.maxProperties ?? 10, 10) });
    }
    default:
      throw new Error(`schema without a type I can draw from: ${JSON.stringify(schema).slice(0, 200)}`);
  }
}
