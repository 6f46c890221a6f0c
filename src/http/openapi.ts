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
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, tryItOutEnabled: true } });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
