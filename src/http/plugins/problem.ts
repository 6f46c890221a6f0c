import type { Duplex } from 'node:stream';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type FieldError, RateLimited } from '../../domain/errors.ts';
import { QuotaExceeded } from '../../domain/quota.ts';
import { MissingSecrets, malformedReferences } from '../../domain/secret.ts';
import { responseHeader } from '../schemas.ts';
import { fieldErrors } from './validation.ts';

// Every failure leaves as an RFC 9457 problem (application/problem+json), mapped here and nowhere else.

export const Problem = Type.Object(
  {
    type: Type.String({ description: 'A URI reference naming the kind of problem; see docs/errors.md.' }),
    title: Type.String({ description: 'A short summary of the kind of problem.' }),
    status: Type.Integer({ description: 'The HTTP status code.' }),
    detail: Type.String({ description: 'What went wrong in this request, in a sentence a person can act on.' }),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          in: Type.Union([Type.Literal('body'), Type.Literal('query'), Type.Literal('path'), Type.Literal('header')]),
          path: Type.String({ description: 'JSON Pointer to the offending value, from the root of its part of the request.' }),
          message: Type.String({ description: 'What is wrong, in words.' }),
          pattern: Type.Optional(
            Type.String({
              description: 'The pattern the value must match, where it broke one: for programs (the message says it in words).',
            }),
          ),
        }),
        { description: 'Each offending field, when the problem is with the request content.' },
      ),
    ),
    quota: Type.Optional(
      Type.Object(
        {
          name: Type.String({ description: 'The setting that sets the quota, e.g. QUOTA_TEMPLATES_PER_ACCOUNT.' }),
          limit: Type.Integer({ description: 'The most the account may hold.' }),
          used: Type.Integer({ description: 'What the account holds now.' }),
        },
        { description: 'With `quota-exceeded`: which quota, its limit and the current use.' },
      ),
    ),
    missingSecrets: Type.Optional(
      Type.Array(Type.String(), {
        description: 'With `unresolvable-template`: every secret the template refers to that the launching account lacks.',
      }),
    ),
  },
  { $id: 'Problem', title: 'Problem' },
);
export type Problem = Static<typeof Problem>;

type Part = 'body' | 'query' | 'path' | 'header';

const KINDS = {
  invalid: { status: 400, slug: 'invalid-request', title: 'Invalid request' },
  unauthenticated: { status: 401, slug: 'unauthenticated', title: 'Not authenticated' },
  forbidden: { status: 403, slug: 'forbidden', title: 'Forbidden' },
  'not-found': { status: 404, slug: 'not-found', title: 'Not found' },
  'method-not-allowed': { status: 405, slug: 'method-not-allowed', title: 'Method not allowed' },
  'request-timeout': { status: 408, slug: 'request-timeout', title: 'Request timeout' },
  conflict: { status: 409, slug: 'conflict', title: 'Conflict' },
  'precondition-failed': { status: 412, slug: 'precondition-failed', title: 'Precondition failed' },
  'payload-too-large': { status: 413, slug: 'payload-too-large', title: 'Payload too large' },
  'unsupported-media-type': { status: 415, slug: 'unsupported-media-type', title: 'Unsupported media type' },
  unresolvable: { status: 422, slug: 'unresolvable-template', title: 'Template cannot be resolved' },
  'idempotency-mismatch': { status: 422, slug: 'idempotency-key-reused', title: 'Idempotency key reused' },
  'quota-exceeded': { status: 403, slug: 'quota-exceeded', title: 'Quota exceeded' },
  'rate-limited': { status: 429, slug: 'rate-limited', title: 'Too many requests' },
  'headers-too-large': { status: 431, slug: 'headers-too-large', title: 'Request header fields too large' },
  internal: { status: 500, slug: 'internal', title: 'Internal error' },
  unavailable: { status: 503, slug: 'unavailable', title: 'Service unavailable' },
} as const;
export type ProblemKind = keyof typeof KINDS;

export const PROBLEM_TYPE_BASE = 'https://podplate.dev/problems/';

export function problem(kind: ProblemKind, detail: string, errors?: FieldError[], part: Part = 'body'): Problem {
  const { status, slug, title } = KINDS[kind];
  const body: Problem = { type: PROBLEM_TYPE_BASE + slug, title, status, detail };
  if (errors && errors.length > 0)
    body.errors = errors.map((e) => ({ in: e.in ?? part, path: e.path, message: e.message, ...(e.pattern ? { pattern: e.pattern } : {}) }));
  return body;
}

export function sendProblem(reply: FastifyReply, body: Problem): FastifyReply {
  if (body.status === 401) reply.header('www-authenticate', 'Bearer realm="podplate"');
  if (body.status === 503) reply.header('retry-after', '1');
  return reply.code(body.status).type('application/problem+json').send(body);
}

/** Headers some problems carry, as the OpenAPI document declares them. */
const PROBLEM_HEADERS: Record<number, Record<string, unknown>> = {
  401: { 'www-authenticate': responseHeader.wwwAuthenticate },
  429: { 'retry-after': responseHeader.retryAfter },
  503: { 'retry-after': responseHeader.retryAfter },
};

/**
 * Response entries for the OpenAPI document, one per status a route can answer with: a status alone is described by
 * the title of its (last) kind, `[status, description]` by the description given.
 */
/** A 403 a write answers when it is not the caller's to make (a read-only key's), or when it would take the account past a quota. */
export const FORBIDDEN_OR_QUOTA: [number, string] = [403, 'Forbidden, or a quota exceeded (the problem type says which)'];

export function problemResponses(...statuses: (number | [number, string])[]) {
  // The first kind of a status describes it (403: Forbidden); a route that may answer another says so with a pair.
  const descriptions = Object.fromEntries(
    Object.values(KINDS)
      .reverse()
      .map((k) => [k.status, k.title]),
  );
  return Object.fromEntries(
    statuses.map((entry) => {
      const [status, description] = typeof entry === 'number' ? [entry, descriptions[entry]] : entry;
      return [
        status,
        {
          description,
          ...(PROBLEM_HEADERS[status] && { headers: PROBLEM_HEADERS[status] }),
          content: { 'application/problem+json': { schema: Type.Ref(Problem) } },
        },
      ];
    }),
  );
}

const PART: Record<string, Part> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/**
 * A body's env checked for malformed secret references beside the schema's refusals, so that one 400 names every bad
 * field: the rule is the domain's (domain/secret.ts), which would otherwise only speak once the schema's errors were
 * mended.
 */
function envReferenceErrors(body: unknown, reported: FieldError[]): FieldError[] {
  const env = (body as { env?: unknown } | null | undefined)?.env;
  if (typeof env !== 'object' || env === null || Array.isArray(env)) return [];
  return malformedReferences(env as Record<string, unknown>).filter((e) => !reported.some((r) => r.path === e.path));
}

function toProblem(error: FastifyError, requestBody?: unknown): Problem {
  if (error instanceof QuotaExceeded) return { ...problem(error.kind, error.message), quota: error.quota };
  if (error instanceof MissingSecrets) return { ...problem(error.kind, error.message), missingSecrets: error.missing };
  if (error instanceof DomainError) {
    return problem(error.kind, error.message, error.errors);
  }
  if (error.validation) {
    const part = PART[error.validationContext ?? 'body'] ?? 'body';
    const schema = fieldErrors(error.validation as Parameters<typeof fieldErrors>[0]);
    const errors = part === 'body' ? [...schema, ...envReferenceErrors(requestBody, schema)] : schema;
    if (errors.length === 1 && errors[0]?.path === '' && part === 'body') {
      return problem('invalid', 'The request body must be a JSON object.', [{ path: '', message: errors[0].message }]);
    }
    const names = errors.map((e) => (e.path === '' ? `the ${part}` : e.path.slice(1))).join(', ');
    return problem('invalid', `The request has invalid ${part === 'body' ? 'fields' : `${part} parameters`}: ${names}.`, errors, part);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('payload-too-large', 'The request body is larger than the limit of 1 MiB.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem('unsupported-media-type', 'The request body must be JSON, sent with Content-Type: application/json.', [
        { path: '/content-type', message: 'must be application/json', in: 'header' },
      ]);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problem('invalid', 'The request body is not as long as its Content-Length says.', [
        { path: '/content-length', message: 'does not match the body', in: 'header' },
      ]);
  }
  const status = error.statusCode ?? 500;
  // Bodies and their headers are answered above; what else a library refuses with a 400 is the path (a static file's).
  if (status === 400) return problem('invalid', 'The request could not be processed.', [{ path: '', message: 'is not valid' }], 'path');
  if (status >= 400 && status < 500) {
    const kind = (Object.keys(KINDS) as ProblemKind[]).find((k) => KINDS[k].status === status);
    if (kind) return problem(kind, 'The request could not be processed.');
    return { type: 'about:blank', title: 'Bad request', status, detail: 'The request could not be processed.' };
  }
  return problem('internal', 'Something went wrong on our side; it has been logged.');
}

export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const body = toProblem(error, request.body);
    if (error instanceof RateLimited) reply.header('retry-after', String(Math.max(1, error.retryAfterSeconds)));
    if (body.status === 503) {
      const cause = (error.cause ?? error) as { name?: string; code?: string; message?: string };
      request.log.warn({ err: { type: cause.name, code: cause.code, message: cause.message } }, 'database unavailable');
    } else if (body.status >= 500) request.log.error({ err: error }, 'request failed');
    // The request's own line (its status) follows; which problem it was is for debugging.
    else request.log.debug({ problem: body.type, status: body.status }, 'request refused');
    return sendProblem(reply, body);
  });
  // The router decides: a path that some route matches, asked with a method none serves, is a 405 naming the methods
  // that are served (OPTIONS asks just that, and is answered 204); a path no route matches is a 404. Answered on
  // arrival, before a body is read: what a body holds can't matter to a method that is not served.
  const unrouted = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    const allowed = app.supportedMethods.filter((method) => method !== 'OPTIONS' && app.findRoute({ method, url: request.url }));
    if (allowed.length === 0) return sendProblem(reply, problem('not-found', `There is no route ${request.method} ${path}.`));
    reply.header('allow', [...allowed, 'OPTIONS'].join(', '));
    if (request.method === 'OPTIONS') return reply.code(204).send();
    return sendProblem(reply, problem('method-not-allowed', `${path} does not take ${request.method}; it takes ${allowed.join(', ')}.`));
  };
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done();
    unrouted(request, reply);
  });
  app.setNotFoundHandler(unrouted);
}

/**
 * Fastify's clientErrorHandler: a request Node's HTTP parser refused before Fastify saw it (a control character in a
 * header, a malformed request line, headers too large or too slow) is answered with a problem too. It is logged by
 * its code alone: the error carries the request's raw bytes, which may hold a key.
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const body =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? problem('request-timeout', 'The request did not arrive in time.')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? problem('headers-too-large', 'The request headers are larger than the server reads.')
        : problem(
            'invalid',
            'The request is not valid HTTP: a header holds a character no header may hold, or the request line is malformed.',
            [{ in: 'header', path: '', message: 'is not valid HTTP' }],
          );
  this.log.debug({ code: error.code }, 'client error');
  if (socket.writable) {
    const text = JSON.stringify(body);
    const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[body.status] ?? 'Bad Request';
    socket.write(
      `HTTP/1.1 ${body.status} ${reason}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
