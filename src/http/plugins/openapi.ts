import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import pkg from '../../../package.json' with { type: 'json' };

// The OpenAPI document, generated from the routes, and the interactive reference at /docs.

/** The OpenAPI 3.1 document, generated from the routes' own schemas, and an interactive reference at /docs. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Podplate',
        version: pkg.version,
        description:
          'The template registry of a GPU cloud. Every operation under /v1 needs `Authorization: Bearer <API key>`. ' +
          'Errors are RFC 9457 problem details (`application/problem+json`) naming each offending field. ' +
          'Any string in a request (a value or member name in the body, a query or path parameter) may hold any Unicode ' +
          'text but NUL (`\\u0000`) and UTF-16 surrogates without their pair; URLs are percent-encoded UTF-8.',
        contact: { name: 'Podplate', url: 'https://podplate.dev', email: 'api@podplate.dev' },
        // The project is private (package.json names no license): its terms are the operator's.
        license: { name: 'Proprietary', url: 'https://podplate.dev/license' },
      },
      servers: [{ url: '/' }],
      // In alphabetical order, as Spectral's openapi-tags-alphabetical asks.
      tags: [
        { name: 'account', description: 'Who the caller is.' },
        {
          name: 'accounts',
          description: 'Accounts (made by platform keys) and their API keys: made, listed without the key, revoked; read-only or expiring.',
        },
        {
          name: 'container registry auths',
          description: "Credentials for private registries: a template names one of its owner's, the platform pulls with it.",
        },
        { name: 'endpoints', description: 'Serverless endpoints, as far as binding templates needs them.' },
        { name: 'operations', description: 'Health, readiness and this document.' },
        {
          name: 'secrets',
          description:
            "Each account's own secrets, sealed at rest: a template's env refers to one as `{{ secret.NAME }}`, resolved at launch for the launching account.",
        },
        { name: 'templates', description: 'Reusable configurations for Pods and Serverless workers.' },
      ],
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key, `pp_…`.' } } },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (document) => published('openapiObject' in document ? document.openapiObject : document.swaggerObject) as object,
  });
  // The reference shares its origin with the web UI, which keeps the user's key in sessionStorage: it runs under a
  // Content-Security-Policy and may not be framed. No validator badge either (it would send the document's URL away).
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_request, reply) => {
      reply.header('x-frame-options', 'DENY').header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
    });
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, tryItOutEnabled: true, validatorUrl: null },
      staticCSP: true,
      transformStaticCSP: docsPolicy,
    });
  });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Keywords only this service's validator reads (validation.ts): other tools reject them, so they are not published. */
const VALIDATOR_ONLY = new Set(['errorMessage']);
/** Keywords whose value is a map of names to schemas: a name there is never a keyword. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'schemas']);
/** Keywords whose value is data, copied as it is. */
const DATA = new Set(['default', 'examples', 'example', 'enum', 'const']);

/** A copy of the document without validator-only keywords: the schemas the validator holds are never changed. */
export function published(value: unknown, names = false): unknown {
  if (Array.isArray(value)) return value.map((item) => published(item));
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (names) copy[key] = published(inner);
    else if (DATA.has(key)) copy[key] = structuredClone(inner);
    else if (!VALIDATOR_ONLY.has(key)) copy[key] = published(inner, NAME_MAPS.has(key));
  }
  return copy;
}

/**
 * The Content-Security-Policy of /docs: the library's own (scripts from the same origin only), made stricter: no
 * framing at all, no <base>, no form posts, styles, fonts and images from the same origin (and data:) only, and no
 * upgrade-insecure-requests (which would send a plain-HTTP install's requests to HTTPS).
 */
export function docsPolicy(libraryPolicy: string): string {
  const directives = new Map(
    libraryPolicy
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name as string, values]),
  );
  directives.delete('upgrade-insecure-requests');
  directives.set('frame-ancestors', ["'none'"]);
  directives.set('base-uri', ["'none'"]);
  directives.set('form-action', ["'none'"]);
  directives.set('img-src', ["'self'", 'data:']);
  directives.set('font-src', ["'self'", 'data:']);
  // Styles from this origin, and the one inline style Swagger UI inserts (an upgrade that changes it fails the browser
  // test, which reports the new hash).
  directives.set('style-src', ["'self'", "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='"]);
  return [...directives].map(([name, values]) => [name, ...values].join(' ')).join('; ');
}
