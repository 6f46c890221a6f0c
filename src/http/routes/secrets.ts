import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ResolvedTemplateSchema, ResolveInput, Secret, SecretNameParam, SecretPut, shownSecret } from '../../domain/secret.ts';
import { FORBIDDEN_OR_QUOTA, problemResponses } from '../plugins/problem.ts';
import { IdParam, linkNext, PageQuery, pageResponse, pageStart, responseHeader } from '../schemas.ts';

// Routes of /v1/secrets (the accounts' own secrets) and of a template resolved for a launch.

const tags = ['secrets'];

export const secretRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { secrets } = app.podplate;

  app.put('/secrets/:name', {
    schema: {
      tags,
      operationId: 'PutSecret',
      summary: 'Set a secret',
      description:
        "Creates the secret `name` of the caller, or replaces its value. A template's env refers to it as `{{ secret.NAME }}`; " +
        "at launch the launching account's own secret of that name is put in its place. The value is stored encrypted and never shown again.",
      params: SecretNameParam,
      body: Type.Ref(SecretPut),
      response: {
        200: { description: 'The value was replaced.', content: { 'application/json': { schema: Type.Ref(Secret) } } },
        201: {
          description: 'The secret was created.',
          headers: { location: responseHeader.location },
          content: { 'application/json': { schema: Type.Ref(Secret) } },
        },
        ...problemResponses(400, 401, FORBIDDEN_OR_QUOTA, 413, 415, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const { secret, created } = await secrets.put(request.caller, request.params.name, request.body.value);
      if (created) reply.code(201).header('location', `/v1/secrets/${secret.name}`);
      return reply.send(shownSecret(secret));
    },
  });

  app.get('/secrets', {
    schema: {
      tags,
      operationId: 'ListSecrets',
      summary: 'List your secrets',
      description:
        'The caller\'s secrets, newest first: their names and when they were set, never their values; a `Link: <…>; rel="next"` header gives the next page.',
      querystring: PageQuery,
      response: {
        200: pageResponse(Type.Ref(Secret), 'One page of secrets.'),
        ...problemResponses(400, 401, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const page = await secrets.list(request.caller, request.query.limit ?? 100, pageStart(request.query.cursor));
      linkNext(request, reply, page.next);
      return page.items.map(shownSecret);
    },
  });

  app.delete('/secrets/:name', {
    schema: {
      tags,
      operationId: 'DeleteSecret',
      summary: 'Delete a secret',
      description:
        "Deletes one of the caller's secrets. Templates that refer to it keep the reference: launching them for this account fails (422) until it is set again.",
      params: SecretNameParam,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      await secrets.delete(request.caller, request.params.name);
      return reply.code(204).send(null);
    },
  });

  app.post('/templates/:templateId/resolve', {
    // It reads: a read-only platform key may resolve.
    config: { changesNothing: true },
    schema: {
      tags: ['templates'],
      operationId: 'ResolveTemplate',
      summary: 'Resolve a template for a launch (platform keys)',
      description:
        "The template as the account named in `account` launches it: each `{{ secret.NAME }}` in its env replaced by that account's " +
        "secret NAME — the launching account's, not the owner's — and the registry credentials when that account owns the template. " +
        'Platform keys only (403 otherwise). A template the account may not use is a 404; secrets it lacks, a 422 listing each in ' +
        '`missingSecrets`. With `revision`, a template no longer at that revision is a 412: pin the revision the user saw, so ' +
        'a change made since (another of their secrets referred to) is not launched unseen. Sent with `Cache-Control: no-store`; nothing resolved is logged or stored.',
      params: IdParam('templateId', 'template'),
      body: Type.Ref(ResolveInput),
      response: {
        200: { description: 'The template, resolved.', content: { 'application/json': { schema: Type.Ref(ResolvedTemplateSchema) } } },
        ...problemResponses(400, 401, 403, 404, 412, 413, 415, [422, 'Template cannot be resolved'], 429, 503),
      },
    },
    handler: async (request, reply) => {
      const { templateId } = request.params;
      const resolved = await secrets.resolve(request.caller, templateId, request.body.account, request.body.revision);
      // Who resolved what for whom, never a value.
      request.log.info({ templateId, account: request.body.account, keyId: request.caller.keyId }, 'template resolved');
      return reply.header('cache-control', 'no-store').send(resolved);
    },
  });
};
