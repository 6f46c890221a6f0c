import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Me } from '../../domain/account.ts';
import { problemResponses } from '../plugins/problem.ts';

// The route of /v1/me: who the caller is.

export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me', {
    schema: {
      tags: ['account'],
      operationId: 'GetMe',
      summary: 'Who the caller is',
      description: "The caller's account (id, name, role) and the key the request used: what `podplate whoami` shows.",
      response: { 200: Type.Ref(Me, { description: 'The caller.' }), ...problemResponses(400, 401, 429, 503) },
    },
    handler: async (request) => app.podplate.keys.whoami(request.caller),
  });
};
