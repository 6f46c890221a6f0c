import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import pkg from '../../package.json' with { type: 'json' };

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
          'Errors are RFC 9457 problem details (`application/problem+json`) naming each offending field.',
        contact: { name: 'Podplate', url: 'https://podplate.dev' },
      },
      servers: [{ url: '/' }],
      tags: [
        { name: 'templates', description: 'Reusable configurations for Pods and Serverless workers.' },
        { name: 'endpoints', description: 'Serverless endpoints, as far as binding templates needs them.' },
        {
          name: 'container registry auths',
          description: "Credentials for private registries: a template names one of its owner's, the platform pulls with it.",
        },
        { name: 'operations', description: 'Health, readiness and this document.' },
      ],
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key, `pp_…`.' } } },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (document) => published('openapiObject' in document ? document.openapiObject : document.swaggerObject) as object,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: true } });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** Keywords only this service's validator reads (validation.ts): other tools reject them, so they are not published. */
const VALIDATOR_ONLY = new Set(['errorMessage', 'x-max-bytes']);
/** Keywords whose value is a map of names to schemas: a name there is never a keyword. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'schemas']);
/** Keywords whose value is data, copied as it is. */
const DATA = new Set(['default', 'examples', 'example', 'enum', 'const']);

/**
 * A copy of the document without validator-only keywords: the schemas the validator holds are never changed. A byte
 * bound (x-max-bytes) is stated in the description instead, beside the maxLength that any validator checks.
 */
export function published(value: unknown, names = false): unknown {
  if (Array.isArray(value)) return value.map((item) => published(item));
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (names) copy[key] = published(inner);
    else if (DATA.has(key)) copy[key] = structuredClone(inner);
    else if (!VALIDATOR_ONLY.has(key)) copy[key] = published(inner, NAME_MAPS.has(key));
  }
  const bytes = names ? undefined : (value as Record<string, unknown>)['x-max-bytes'];
  if (typeof bytes === 'number') {
    copy.description = [copy.description, `At most ${bytes} bytes in UTF-8.`].filter(Boolean).join(' ');
  }
  return copy;
}
