import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { problem, problemResponses, sendProblem } from '../plugins/problem.ts';
import { NoQuery } from '../schemas.ts';

// Routes of /healthz and /readyz.

const Status = (status: string, description: string) =>
  Type.Object({ status: Type.Literal(status, { description: 'Always this value.' }) }, { description });

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: {
      tags: ['operations'],
      operationId: 'Health',
      summary: 'The process is up',
      description:
        'Liveness: answers as long as the process serves HTTP, without asking the database. Needs no key. ' +
        'Point a process supervisor here; a load balancer should use /readyz. Takes no query parameter (400 naming any).',
      security: [],
      querystring: NoQuery,
      response: { 200: Status('ok', 'The process is up.'), ...problemResponses(400) },
    },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/readyz', {
    schema: {
      tags: ['operations'],
      operationId: 'Ready',
      summary: 'The database answers: the process can serve requests',
      description:
        'Readiness: 200 when the database answers, 503 (with Retry-After) while it does not; the process reconnects by ' +
        "itself. Needs no key. Point a load balancer's health check here. Takes no query parameter (400 naming any).",
      security: [],
      querystring: NoQuery,
      response: { 200: Status('ready', 'The database answers.'), ...problemResponses(400, 503) },
    },
    handler: async (request, reply) => {
      try {
        await app.podplate.ready();
        return { status: 'ready' };
      } catch (error) {
        request.log.warn({ err: error }, 'database not reachable');
        return sendProblem(reply, problem('unavailable', 'The database is not reachable.'));
      }
    },
  });
};
