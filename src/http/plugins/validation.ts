import type { TSchema } from '@sinclair/typebox';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { escapePointer } from '../../domain/errors.ts';
import { MAX_FIELD_ERRORS, validator } from '../../domain/validation.ts';

// The schemas' errors as field errors, and the limits on them, are the domain's (domain/validation.ts), shared with
// what checks stored values (an import).
export { fieldErrors, MAX_FIELD_ERRORS } from '../../domain/validation.ts';

/** The request validator of one app; `shared` are the schemas that routes refer to by `$ref`. */
export function validatorCompiler(shared: TSchema[]): FastifySchemaCompiler<TSchema> {
  // Bodies are taken as sent: a string is never a number. Query strings and paths are text by nature, so
  // "50" may be an integer there, and "true"/"false" (only those) a boolean.
  const bodies = validator({ coerceTypes: false, schemas: shared });
  const texts = validator({ coerceTypes: true, schemas: shared });
  return ({ schema, httpPart }) => {
    if (httpPart !== 'body') return decimalIntegers(schema, texts.compile(schema));
    const validate = bodies.compile(schema);
    const resolved = (schema.$ref ? bodies.getSchema(schema.$ref)?.schema : schema) as TSchema;
    const guarded = (data: unknown) => {
      guarded.errors = oversized(resolved, data);
      if (guarded.errors.length > 0) return false;
      const valid = validate(data);
      guarded.errors = validate.errors ?? [];
      return valid;
    };
    guarded.errors = [] as ErrorObject[];
    return guarded;
  };
}

/**
 * Validates query or path text where an integer is written in decimal digits only, with an optional "-": Ajv's
 * coercion would take "1e400" as Infinity (and let it past every bound), "0x10" as 16 and " 5" as 5.
 */
function decimalIntegers(schema: TSchema, validate: ValidateFunction): ValidateFunction {
  const integers = Object.entries((schema.properties ?? {}) as Record<string, { type?: unknown }>)
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
  if (integers.length === 0) return validate;
  const guarded = ((data: Record<string, unknown>) => {
    const errors: ErrorObject[] = integers
      .filter((name) => typeof data?.[name] === 'string' && !/^-?[0-9]+$/.test(data[name] as string))
      .map((name) => ({ instancePath: `/${escapePointer(name)}`, schemaPath: '', keyword: 'type', params: { type: 'integer' } }));
    const valid = validate(data);
    guarded.errors = [...errors, ...(validate.errors ?? [])];
    return valid && errors.length === 0;
  }) as ValidateFunction;
  guarded.errors = null;
  return guarded;
}

/**
 * What is refused before validation, and alone when found, so that junk costs less to refuse than a request to
 * serve: a body object with more keys than a request could hold (its first unknown fields are named, at most
 * MAX_FIELD_ERRORS), and fields that hold more entries than their schema allows. Validating each of half a million
 * array items, or building an error for each of 100,000 unknown fields, held the process for 165-540 ms to say
 * the same.
 */
function oversized(schema: TSchema, data: unknown): ErrorObject[] {
  if (!schema?.properties || typeof data !== 'object' || data === null || Array.isArray(data)) return [];
  const keys = Object.keys(data);
  if (schema.additionalProperties === false && keys.length > MAX_FIELD_ERRORS) {
    const known = schema.properties as Record<string, unknown>;
    const unknown: ErrorObject[] = [];
    for (const key of keys) {
      if (Object.hasOwn(known, key)) continue;
      unknown.push({ instancePath: '', schemaPath: '', keyword: 'additionalProperties', params: { additionalProperty: key } });
      if (unknown.length === MAX_FIELD_ERRORS) break;
    }
    return unknown;
  }
  const errors: ErrorObject[] = [];
  for (const [field, value] of Object.entries(data)) {
    const property = schema.properties[field] as { maxItems?: number; maxProperties?: number } | undefined;
    if (!property || typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value) && property.maxItems !== undefined && value.length > property.maxItems) {
      errors.push({ instancePath: `/${escapePointer(field)}`, schemaPath: '', keyword: 'maxItems', params: { limit: property.maxItems } });
    } else if (!Array.isArray(value) && property.maxProperties !== undefined && Object.keys(value).length > property.maxProperties) {
      errors.push({
        instancePath: `/${escapePointer(field)}`,
        schemaPath: '',
        keyword: 'maxProperties',
        params: { limit: property.maxProperties },
      });
    }
  }
  return errors;
}
