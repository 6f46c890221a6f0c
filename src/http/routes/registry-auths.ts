import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { trimName } from '../../domain/name.ts';
import { RegistryAuth, RegistryAuthCreate, RegistryAuthCredentials, shownRegistryAuth } from '../../domain/registry-auth.ts';
import { FORBIDDEN_OR_QUOTA, problemResponses } from '../plugins/problem.ts';
import { IdParam, linkNext, PageQuery, pageResponse, pageStart, responseHeader } from '../schemas.ts';

// The public API's names: /containerregistryauth, and containerRegistryAuthId for the path parameter.
const params = IdParam('containerRegistryAuthId', 'container registry auth');
const tags = ['container registry auths'];

export const registryAuthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { registryAuths } = app.podplate;

  app.post('/containerregistryauth', {
    preValidation: async (request) => trimName(request.body),
    schema: {
      tags,
      operationId: 'CreateContainerRegistryAuth',
      summary: 'Create a container registry auth',
      description:
        'Stores credentials for a private registry, the password encrypted. A template of yours refers to them by ' +
        '`containerRegistryAuthId`; the platform reads them back to pull its image. The password is never shown again. ' +
        'An account may hold at most `QUOTA_REGISTRY_AUTHS_PER_ACCOUNT` of them (403 `quota-exceeded` beyond).',
      body: Type.Ref(RegistryAuthCreate),
      response: {
        200: {
          description: 'The new registry auth (without the password).',
          headers: { location: responseHeader.location },
          content: { 'application/json': { schema: Type.Ref(RegistryAuth) } },
        },
        ...problemResponses(400, 401, FORBIDDEN_OR_QUOTA, 409, 413, 415, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const auth = await registryAuths.create(request.caller, request.body);
      return reply.header('location', `/v1/containerregistryauth/${auth.id}`).send(shownRegistryAuth(auth));
    },
  });

  app.get('/containerregistryauth', {
    schema: {
      tags,
      operationId: 'ListContainerRegistryAuths',
      summary: 'List your container registry auths',
      description:
        'The caller\'s registry auths, newest first, never their passwords; a `Link: <…>; rel="next"` header gives the next page.',
      querystring: PageQuery,
      response: {
        200: pageResponse(Type.Ref(RegistryAuth), 'One page of registry auths.'),
        ...problemResponses(400, 401, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const page = await registryAuths.list(request.caller, request.query.limit ?? 100, pageStart(request.query.cursor));
      linkNext(request, reply, page.next);
      return page.items.map(shownRegistryAuth);
    },
  });

  app.get('/containerregistryauth/:containerRegistryAuthId', {
    schema: {
      tags,
      operationId: 'GetContainerRegistryAuth',
      summary: 'Find a container registry auth by ID',
      description: "One of the caller's registry auths, without its password; anybody else's is a 404.",
      params,
      response: { 200: Type.Ref(RegistryAuth, { description: 'The registry auth.' }), ...problemResponses(400, 401, 404, 429, 503) },
    },
    handler: async (request) => shownRegistryAuth(await registryAuths.get(request.caller, request.params.containerRegistryAuthId)),
  });

  app.get('/containerregistryauth/:containerRegistryAuthId/credentials', {
    schema: {
      tags,
      operationId: 'GetContainerRegistryAuthCredentials',
      summary: 'Read the credentials of a registry auth (platform keys)',
      description:
        "The username and password, for the platform that pulls a template's image. Platform keys only: a user key is " +
        'refused (403) whatever the id. Sent with `Cache-Control: no-store`.',
      params,
      response: {
        200: Type.Ref(RegistryAuthCredentials, { description: 'The credentials.' }),
        ...problemResponses(400, 401, 403, 404, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const { containerRegistryAuthId } = request.params;
      const credentials = await registryAuths.credentials(request.caller, containerRegistryAuthId);
      // Who read which credentials, never what they are.
      request.log.info({ containerRegistryAuthId, keyId: request.caller.keyId }, 'registry credentials read');
      return reply.header('cache-control', 'no-store').send(credentials);
    },
  });

  app.delete('/containerregistryauth/:containerRegistryAuthId', {
    schema: {
      tags,
      operationId: 'DeleteContainerRegistryAuth',
      summary: 'Delete a container registry auth',
      description: "Deletes one of the caller's registry auths. While a template refers to it, that is a 409.",
      params,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 409, 429, 503) },
    },
    handler: async (request, reply) => {
      await registryAuths.delete(request.caller, request.params.containerRegistryAuthId);
      return reply.code(204).send(null);
    },
  });
};
