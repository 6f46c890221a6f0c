import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { escapePointer, type FieldError } from '../domain/errors.ts';
import { IMAGE_REFERENCE_PATTERN, imageReferenceProblem } from '../domain/image-reference.ts';
import { MOUNT_PATH_PATTERN, mountPathProblem } from '../domain/mount-path.ts';
import { READ_ONLY_FIELDS } from '../domain/template.ts';

/**
 * Patterns that a domain rule explains: the pattern is what the OpenAPI document publishes and what decides; the
 * rule, which accepts the same values, says what is wrong.
 */
const EXPLAINED_PATTERNS = new Map<string, (value: string) => string | undefined>([
  [IMAGE_REFERENCE_PATTERN, imageReferenceProblem],
  [MOUNT_PATH_PATTERN, mountPathProblem],
]);

function validator(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, removeAdditional: false, useDefaults: false, ...options });
  ajv.addKeyword({ keyword: 'errorMessage', schemaType: 'string' });
  // Size in UTF-8 bytes, where a bound is in KiB; maxLength beside it bounds the characters.
  ajv.addKeyword({
    keyword: 'x-max-bytes',
    type: 'string',
    schemaType: 'number',
    validate: (max: number, data: string) => data.length <= max / 3 || Buffer.byteLength(data, 'utf8') <= max,
    error: { message: 'too many bytes' },
  });
  ajv.addFormat('date-time', { type: 'string', validate: (value: string) => !Number.isNaN(Date.parse(value)) });
  return ajv;
}

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

const readOnly = new Set<string>(READ_ONLY_FIELDS);

function explain(error: ErrorObject): FieldError {
  const { params, instancePath, keyword } = error;
  const custom = (error.parentSchema as { errorMessage?: string } | undefined)?.errorMessage;
  switch (keyword) {
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      const path = `${instancePath}/${escapePointer(field)}`;
      if (instancePath === '' && readOnly.has(field)) return { path, message: 'is read-only: the server sets it' };
      return { path, message: 'is not a known field' };
    }
    case 'required':
      return { path: `${instancePath}/${escapePointer(String(params.missingProperty))}`, message: 'is required' };
    case 'propertyNames':
      return { path: `${instancePath}/${escapePointer(String(params.propertyName))}`, message: 'is not a valid name' };
    case 'pattern': {
      const problem = EXPLAINED_PATTERNS.get(String(params.pattern));
      const explained = problem && typeof error.data === 'string' ? problem(error.data) : undefined;
      return { path: instancePath, message: explained ?? custom ?? `must match ${params.pattern}` };
    }
    case 'format':
      return { path: instancePath, message: `must be a ${params.format}` };
    case 'type': {
      const types = String(params.type)
        .split(',')
        .map((t) =>
          t === 'integer' ? 'an integer' : t === 'object' ? 'an object' : t === 'array' ? 'an array' : t === 'null' ? 'null' : `a ${t}`,
        );
      return { path: instancePath, message: `must be ${types.join(' or ')}` };
    }
    case 'minimum':
      return { path: instancePath, message: `must be at least ${params.limit}` };
    case 'maximum':
      return { path: instancePath, message: `must be at most ${params.limit}` };
    case 'minLength':
      return { path: instancePath, message: params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters` };
    case 'maxLength':
      return { path: instancePath, message: `must be at most ${params.limit} characters` };
    case 'x-max-bytes':
      return {
        path: instancePath,
        message: `must be at most ${(error.parentSchema as Record<string, number>)['x-max-bytes']} bytes in UTF-8`,
      };
    case 'maxItems':
      return { path: instancePath, message: `must have at most ${params.limit} entries` };
    case 'maxProperties':
      return { path: instancePath, message: `must have at most ${params.limit} entries` };
    case 'uniqueItems': {
      const [first, repeat] = [Number(params.i), Number(params.j)].sort((a, b) => a - b);
      return { path: `${instancePath}/${repeat}`, message: `repeats entry ${first}` };
    }
    case 'enum':
      return { path: instancePath, message: `must be one of ${(params.allowedValues as unknown[]).join(', ')}` };
    default:
      return { path: instancePath, message: custom ?? error.message ?? 'is not valid' };
  }
}

/** At most this many field errors are listed; a request with more has its first ones named. */
export const MAX_FIELD_ERRORS = 100;

/** Ajv's errors as field errors: one per offending place, the most specific message first. */
export function fieldErrors(errors: ErrorObject[]): FieldError[] {
  const byPath = new Map<string, FieldError>();
  for (const error of errors) {
    // An error inside propertyNames reports the map's path; the name it concerns is in `propertyName`.
    const name = error.keyword === 'propertyNames' ? undefined : error.propertyName;
    const field = explain(name === undefined ? error : { ...error, instancePath: `${error.instancePath}/${escapePointer(name)}` });
    if (!byPath.has(field.path)) byPath.set(field.path, field);
    if (byPath.size >= MAX_FIELD_ERRORS) break;
  }
  return [...byPath.values()];
}
