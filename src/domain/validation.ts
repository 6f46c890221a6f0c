import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { escapePointer, type FieldError } from './errors.ts';
import { IMAGE_REFERENCE_PATTERN, imageReferenceProblem } from './image-reference.ts';
import { MOUNT_PATH_PATTERN, mountPathProblem } from './mount-path.ts';
import { NAME_PATTERN, nameProblem } from './name.ts';
import { CONTENT_FIELDS, ENV_NAME, PORT, READ_ONLY_FIELDS, Template } from './template.ts';

// The schemas of template.ts as a validator (Ajv, with the keywords only ours read), and its errors as field errors
// each domain rule explains: what checks a request (http/validation.ts) and what checks stored values (an import).

/**
 * Patterns that a domain rule explains: the pattern is what the OpenAPI document publishes and what decides; the
 * rule, which accepts the same values, says what is wrong.
 */
const EXPLAINED_PATTERNS = new Map<string, (value: string) => string | undefined>([
  [IMAGE_REFERENCE_PATTERN, imageReferenceProblem],
  [MOUNT_PATH_PATTERN, mountPathProblem],
  [NAME_PATTERN, nameProblem],
]);

export function validator(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: true, removeAdditional: false, useDefaults: false, ...options });
  ajv.addKeyword({ keyword: 'errorMessage', schemaType: 'string' });
  ajv.addFormat('date-time', { type: 'string', validate: (value: string) => !Number.isNaN(Date.parse(value)) });
  return ajv;
}

const readOnly = new Set<string>(READ_ONLY_FIELDS);
/** Patterns whose message says them in words, short enough to follow it as `pattern`, for programs. */
const SHOWN_PATTERNS = new Set([ENV_NAME, PORT]);

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
      const pattern = String(params.pattern);
      const message = explained ?? custom ?? 'is not in the form this field takes';
      return SHOWN_PATTERNS.has(pattern) ? { path: instancePath, message, pattern } : { path: instancePath, message };
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

const stored = validator({ coerceTypes: false });
let checkTemplate: ValidateFunction | undefined;
let checkContent: ValidateFunction | undefined;

/** What is wrong with `value` as a Template the API would show (every field, nothing else); none when nothing. */
export function templateProblems(value: unknown): FieldError[] {
  checkTemplate ??= stored.compile({ ...Template, $id: undefined });
  return checkTemplate(value) ? [] : fieldErrors(checkTemplate.errors ?? []);
}

/** What is wrong with `value` as a template's content (a revision's snapshot: every field its owner chose). */
export function contentProblems(value: unknown): FieldError[] {
  checkContent ??= stored.compile({
    type: 'object',
    properties: Object.fromEntries(CONTENT_FIELDS.map((field) => [field, Template.properties[field]])),
    required: [...CONTENT_FIELDS],
    additionalProperties: false,
  });
  return checkContent(value) ? [] : fieldErrors(checkContent.errors ?? []);
}
