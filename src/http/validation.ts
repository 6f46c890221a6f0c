import type { TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type Options } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../domain/errors.ts';
import { imageReferenceProblem } from '../domain/image-reference.ts';
import { mountPathProblem } from '../domain/mount-path.ts';
import { IMMUTABLE_FIELDS, READ_ONLY_FIELDS } from '../domain/template.ts';

/** Custom formats: each is a domain rule that both validates and explains what is wrong. */
const FORMATS: Record<string, (value: string) => string | undefined> = {
  'image-reference': imageReferenceProblem,
  'mount-path': mountPathProblem,
};

function validator(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, removeAdditional: false, useDefaults: false, ...options });
  ajv.addKeyword({ keyword: 'errorMessage', schemaType: 'string' });
  for (const [name, problem] of Object.entries(FORMATS)) {
    ajv.addFormat(name, { type: 'string', validate: (value: string) => problem(value) === undefined });
  }
  ajv.addFormat('date-time', { type: 'string', validate: (value: string) => !Number.isNaN(Date.parse(value)) });
  return ajv;
}

/** The request validator of one app; `shared` are the schemas that routes refer to by `$ref`. */
export function validatorCompiler(shared: TSchema[]): FastifySchemaCompiler<TSchema> {
  // Bodies are taken as sent: a string is never a number. Query strings and paths are text by nature, so
  // "50" may be an integer there, and "true"/"false" (only those) a boolean.
  const bodies = validator({ coerceTypes: false, schemas: shared });
  const texts = validator({ coerceTypes: true, schemas: shared });
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodies : texts).compile(schema);
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

const readOnly = new Set<string>(READ_ONLY_FIELDS);
const immutable = new Set<string>(IMMUTABLE_FIELDS);

function explain(error: ErrorObject): FieldError {
  const { params, instancePath, keyword } = error;
  const custom = (error.parentSchema as { errorMessage?: string } | undefined)?.errorMessage;
  switch (keyword) {
    case 'additionalProperties': {
      const field = String(params.additionalProperty);
      const path = `${instancePath}/${escapePointer(field)}`;
      if (instancePath === '' && immutable.has(field)) return { path, message: `can't be changed after the template is created` };
      if (instancePath === '' && readOnly.has(field)) return { path, message: 'is read-only: the server sets it' };
      return { path, message: 'is not a known field' };
    }
    case 'required':
      return { path: `${instancePath}/${escapePointer(String(params.missingProperty))}`, message: 'is required' };
    case 'propertyNames':
      return { path: `${instancePath}/${escapePointer(String(params.propertyName))}`, message: 'is not a valid name' };
    case 'format': {
      const problem = FORMATS[String(params.format)];
      return {
        path: instancePath,
        message: (problem && typeof error.data === 'string' && problem(error.data)) || `must be a ${params.format}`,
      };
    }
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
      return { path: instancePath, message: custom ?? `must be at least ${params.limit} characters` };
    case 'maxLength':
      return { path: instancePath, message: custom ?? `must be at most ${params.limit} characters` };
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

/** Ajv's errors as field errors: one per offending place, the most specific message first. */
export function fieldErrors(errors: ErrorObject[]): FieldError[] {
  const byPath = new Map<string, FieldError>();
  for (const error of errors) {
    // An error inside propertyNames reports the map's path; the name it concerns is in `propertyName`.
    const name = error.keyword === 'propertyNames' ? undefined : error.propertyName;
    const field = explain(name === undefined ? error : { ...error, instancePath: `${error.instancePath}/${escapePointer(name)}` });
    if (!byPath.has(field.path)) byPath.set(field.path, field);
  }
  return [...byPath.values()];
}
