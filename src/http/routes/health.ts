import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { problem, problemResponses, sendProblem } from '../problem.ts';

const Status = Type.Object({ status: Type.String() });

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: {
      tags: ['operations'],
      operationId: 'Health',
      summary: 'The process is up',
      security: [],
      response: { 200: Status },
    },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/readyz', {
    schema: {
      tags: ['operations'],
      operationId: 'Ready',
      summary: 'The database answers: the process can serve requests',
      security: [],
      response: { 200: Status, ...problemResponses(503) },
    },
    handler: async (request, reply) => {
      try {
        await app.registry.ready();
        return { status: 'ready' };
      } catch (error) {
        request.log.warn({ err: error }, 'database not reachable');
        return sendProblem(reply, problem('unavailable', 'The database is not reachable.'));
      }
    },
  });
};
