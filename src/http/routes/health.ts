import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { problem, problemResponses, sendProblem } from '../problem.ts';

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
        'Point a process supervisor here; a load balancer should use /readyz.',
      security: [],
      response: { 200: Status('ok', 'The process is up.') },
    },
    handler: async () => ({ status: 'ok' }),
  });

  app.get('/metrics', {
    schema: {
      tags: ['operations'],
      operationId: 'Metrics',
      summary: 'Prometheus metrics: the webhook outbox',
      description:
        'The backlog of release webhooks in the Prometheus text format: pending deliveries, those whose last attempt ' +
        'failed, and the age of the oldest. Needs no key; 503 while the database is unreachable.',
      security: [],
      response: {
        200: { description: 'Prometheus text exposition format.', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...problemResponses(503),
      },
    },
    handler: async (_request, reply) => {
      const backlog = await app.registry.releases.backlog();
      const age = backlog.oldest ? Math.max(0, (Date.now() - Date.parse(backlog.oldest)) / 1000) : 0;
      const lines = [
        '# HELP podplate_outbox_pending Release webhooks not yet acknowledged by the receiver.',
        '# TYPE podplate_outbox_pending gauge',
        `podplate_outbox_pending ${backlog.pending}`,
        '# HELP podplate_outbox_failing Pending release webhooks whose last attempt failed.',
        '# TYPE podplate_outbox_failing gauge',
        `podplate_outbox_failing ${backlog.failing}`,
        '# HELP podplate_outbox_oldest_pending_seconds Age of the oldest pending release webhook.',
        '# TYPE podplate_outbox_oldest_pending_seconds gauge',
        `podplate_outbox_oldest_pending_seconds ${age.toFixed(3)}`,
      ];
      return reply.type('text/plain; version=0.0.4').send(`${lines.join('\n')}\n`);
    },
  });

  app.get('/readyz', {
    schema: {
      tags: ['operations'],
      operationId: 'Ready',
      summary: 'The database answers: the process can serve requests',
      description:
        'Readiness: 200 when the database answers, 503 (with Retry-After) while it does not; the process reconnects by ' +
        "itself. Needs no key. Point a load balancer's health check here.",
      security: [],
      response: { 200: Status('ready', 'The database answers.'), ...problemResponses(503) },
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
