import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { trimName } from '../../domain/name.ts';
import { Template, TemplateCreate, TemplateUpdate } from '../../domain/template.ts';
import * as templates from '../../registry/templates.ts';
import { problemResponses } from '../problem.ts';
import { IdParam, IncludeQuery, linkNext, pageStart, TemplateListQuery } from '../schemas.ts';

const params = IdParam('templateId', 'template');
const tags = ['templates'];

export const templateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app;
  const trimBody = async (request: { body: unknown }) => trimName(request.body);

  app.post('/templates', {
    preValidation: trimBody,
    schema: {
      tags,
      operationId: 'CreateTemplate',
      summary: 'Create a template',
      description: 'Creates a template owned by the caller; with a platform key, an official one (`isPlatform: true`).',
      body: Type.Ref(TemplateCreate),
      response: {
        200: Type.Ref(Template, { description: 'The new template; `Location` names it.' }),
        ...problemResponses(400, 401, 409, 413, 415, 503),
      },
    },
    handler: async (request, reply) => {
      const template = await templates.createTemplate(store, request.caller, request.body);
      return reply.header('location', `/v1/templates/${template.id}`).send(template);
    },
  });

  app.get('/templates', {
    schema: {
      tags,
      operationId: 'ListTemplates',
      summary: 'List templates',
      description:
        'The templates the caller can see with the given flags, newest first, as a bare array. ' +
        'When more follow, a `Link: <…>; rel="next"` header gives the next page.',
      querystring: TemplateListQuery,
      response: { 200: Type.Array(Type.Ref(Template), { description: 'One page of templates.' }), ...problemResponses(400, 401, 503) },
    },
    handler: async (request, reply) => {
      const { limit = 100, cursor, ...filters } = request.query;
      const page = await templates.listTemplates(store, request.caller, { ...filters, limit, before: pageStart(cursor) });
      linkNext(request, reply, page.next);
      return page.templates;
    },
  });

  app.get('/templates/:templateId', {
    schema: {
      tags,
      operationId: 'GetTemplate',
      summary: 'Find a template by ID',
      description: 'Returns the template if the caller can see it with the given flags; otherwise 404.',
      params,
      querystring: IncludeQuery,
      response: { 200: Type.Ref(Template, { description: 'The template.' }), ...problemResponses(400, 401, 404, 503) },
    },
    handler: async (request) => templates.getTemplate(store, request.caller, request.params.templateId, request.query),
  });

  const updates = [
    { method: 'POST', url: '/templates/:templateId/update', operationId: 'UpdateTemplate', summary: 'Update a template' },
    {
      method: 'PATCH',
      url: '/templates/:templateId',
      operationId: 'PatchTemplate',
      summary: 'Update a template (synonym of POST …/update)',
    },
  ] as const;
  for (const { method, url, operationId, summary } of updates) {
    app.route({
      method,
      url,
      preValidation: trimBody,
      schema: {
        tags,
        operationId,
        summary,
        description:
          'A partial update by the owner: absent fields keep their value. A change makes a new revision and triggers a ' +
          'rolling release for the endpoint bound to the template; an update that changes nothing changes nothing.',
        params,
        body: Type.Ref(TemplateUpdate),
        response: {
          200: Type.Ref(Template, { description: 'The template after the update.' }),
          ...problemResponses(400, 401, 403, 404, 409, 413, 415, 503),
        },
      },
      handler: async (request) => templates.updateTemplate(store, request.caller, request.params.templateId, request.body),
    });
  }

  app.delete('/templates/:templateId', {
    schema: {
      tags,
      operationId: 'DeleteTemplate',
      summary: 'Delete a template',
      description: 'Deletes a template of the caller. A template bound to an endpoint cannot be deleted (409).',
      params,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 409, 503) },
    },
    handler: async (request, reply) => {
      await templates.deleteTemplate(store, request.caller, request.params.templateId);
      return reply.code(204).send(null);
    },
  });
};
