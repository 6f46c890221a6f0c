import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

// Cross-origin requests (CORS): none by default; the origins CORS_ORIGINS lists get the Access-Control-* answers a
// browser needs to call the API with a key from a page of theirs (an operator's console on another origin).

/** The request headers a page of a listed origin may send. */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'if-match', 'if-none-match', 'idempotency-key', 'x-request-id'];
/** The response headers its script may read. */
const EXPOSED_HEADERS = [
  'etag',
  'link',
  'x-next-page',
  'location',
  'retry-after',
  'idempotent-replayed',
  'www-authenticate',
  'x-request-id',
];
/** Seconds a browser may keep a preflight's answer. */
export const PREFLIGHT_MAX_AGE = 600;

/** The origins CORS_ORIGINS lists ("*" for any), without spaces or an empty entry. */
export const corsOrigins = (setting = ''): string[] =>
  setting
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);

/**
 * Answers the listed origins' requests and preflights; any other origin, or a request without one, is served as
 * without CORS (a preflight from it gets the 204 with Allow that any OPTIONS does, and no Access-Control-*). Keys
 * travel in Authorization, never in cookies: no credentials are allowed.
 */
export async function registerCors(app: FastifyInstance, setting: string | undefined): Promise<void> {
  const origins = corsOrigins(setting);
  if (origins.length === 0) return;
  const any = origins.includes('*');
  const listed = new Set(origins);
  await app.register(cors, {
    // false: not this origin's request, so no CORS headers and no preflight answer (the router's OPTIONS answers).
    origin: (origin, done) => done(null, origin !== undefined && (any || listed.has(origin)) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    credentials: false,
    maxAge: PREFLIGHT_MAX_AGE,
    // An OPTIONS from a listed origin without Access-Control-Request-Method is answered like a preflight, not a 400.
    strictPreflight: false,
  });
}
