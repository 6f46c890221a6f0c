import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Endpoint, EndpointCreate, EndpointUpdate } from '../../domain/endpoint.ts';
import { trimName } from '../../domain/name.ts';
import { Release, ReleaseProgress } from '../../releases/release.ts';
import { FORBIDDEN_OR_QUOTA, problemResponses } from '../plugins/problem.ts';
import { IdParam, linkNext, PageQuery, pageResponse, pageStart, responseHeader } from '../schemas.ts';

// Routes of /v1/endpoints and their releases.

const params = IdParam('endpointId', 'endpoint');
const tags = ['endpoints'];

export const endpointRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { endpoints, releases } = app.podplate;

  app.post('/endpoints', {
    preValidation: async (request) => trimName(request.body),
    schema: {
      tags,
      operationId: 'CreateEndpoint',
      summary: 'Create a Serverless endpoint',
      description: 'Binds a Serverless template of the caller to a new endpoint. A template is bound to one endpoint at a time.',
      body: Type.Ref(EndpointCreate),
      response: {
        200: {
          description: 'The new endpoint.',
          headers: { location: responseHeader.location },
          content: { 'application/json': { schema: Type.Ref(Endpoint) } },
        },
        ...problemResponses(400, 401, FORBIDDEN_OR_QUOTA, 409, 413, 415, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const endpoint = await endpoints.create(request.caller, request.body);
      return reply.header('location', `/v1/endpoints/${endpoint.id}`).send(endpoint);
    },
  });

  app.get('/endpoints', {
    schema: {
      tags,
      operationId: 'ListEndpoints',
      summary: 'List your endpoints',
      description: 'The caller\'s endpoints, newest first; a `Link: <…>; rel="next"` header gives the next page.',
      querystring: PageQuery,
      response: { 200: pageResponse(Type.Ref(Endpoint), 'One page of endpoints.'), ...problemResponses(400, 401, 429, 503) },
    },
    handler: async (request, reply) => {
      const page = await endpoints.list(request.caller, request.query.limit ?? 100, pageStart(request.query.cursor));
      linkNext(request, reply, page.next);
      return page.items;
    },
  });

  app.get('/endpoints/:endpointId', {
    schema: {
      tags,
      operationId: 'GetEndpoint',
      summary: 'Find an endpoint by ID',
      description: 'Returns an endpoint of the caller; any other id is a 404.',
      params,
      response: { 200: Type.Ref(Endpoint, { description: 'The endpoint.' }), ...problemResponses(400, 401, 404, 429, 503) },
    },
    handler: async (request) => endpoints.get(request.caller, request.params.endpointId),
  });

  app.patch('/endpoints/:endpointId', {
    preValidation: async (request) => trimName(request.body),
    schema: {
      tags,
      operationId: 'UpdateEndpoint',
      summary: 'Update an endpoint',
      description:
        'A partial update by the owner: absent fields keep their value. `templateId` rebinds the endpoint under the ' +
        "rules of a create (a Serverless template of the caller's own, not bound elsewhere): the old template is " +
        "unbound and a rolling release to the new one starts (the endpoint's `version` moves on). A change of `name` " +
        'or workers starts no release; an update that changes nothing writes nothing. The server-set fields of a GET ' +
        'may be sent back with their current values.',
      params,
      body: Type.Ref(EndpointUpdate),
      response: {
        200: Type.Ref(Endpoint, { description: 'The endpoint after the update.' }),
        ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429, 503),
      },
    },
    handler: async (request) => endpoints.update(request.caller, request.params.endpointId, request.body),
  });

  app.get('/endpoints/:endpointId/releases', {
    schema: {
      tags,
      operationId: 'ListEndpointReleases',
      summary: "List an endpoint's rolling releases",
      description:
        'The releases of an endpoint (of the caller, or any with a platform key), newest first, each with the state ' +
        'of the webhook that announced it. A `Link: <…>; rel="next"` header gives the next page.',
      params,
      querystring: PageQuery,
      response: { 200: pageResponse(Type.Ref(Release), 'One page of releases.'), ...problemResponses(400, 401, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      const { limit = 100, cursor } = request.query;
      const page = await releases.list(request.caller, request.params.endpointId, limit, pageStart(cursor));
      linkNext(request, reply, page.next);
      return page.items;
    },
  });

  app.post('/endpoints/:endpointId/releases/:releaseId/progress', {
    schema: {
      tags,
      operationId: 'ReportReleaseProgress',
      summary: 'Report the progress of a release (platform keys)',
      description:
        'The orchestrator reports how far a release has rolled: `rolling` with counts, then `completed` or `failed`. ' +
        'A completed, failed or superseded release changes no more (409).',
      params: Type.Object({ ...params.properties, ...IdParam('releaseId', 'release').properties }, { additionalProperties: false }),
      body: Type.Ref(ReleaseProgress),
      response: {
        200: Type.Ref(Release, { description: 'The release.' }),
        ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429, 503),
      },
    },
    handler: async (request) => releases.reportProgress(request.caller, request.params.endpointId, request.params.releaseId, request.body),
  });

  app.delete('/endpoints/:endpointId', {
    schema: {
      tags,
      operationId: 'DeleteEndpoint',
      summary: 'Delete an endpoint',
      description: 'Deletes the endpoint and unbinds its template.',
      params,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      await endpoints.delete(request.caller, request.params.endpointId);
      return reply.code(204).send(null);
    },
  });
};
