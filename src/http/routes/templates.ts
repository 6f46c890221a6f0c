import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { trimName } from '../../domain/name.ts';
import { Revision, RollbackInput } from '../../domain/revision.ts';
import { Template, TemplateCreate, TemplateListItem, type TemplateRecord, TemplateUpdate } from '../../domain/template.ts';
import { UsageReport } from '../../domain/usage.ts';
import { etagOf, ifMatchHeader, ifNoneMatchHeader, notModified, preconditionFrom } from '../plugins/conditional.ts';
import { idempotencyKeyHeader, idempotencyOf, sendAnswer } from '../plugins/idempotency.ts';
import { FORBIDDEN_OR_QUOTA, problemResponses } from '../plugins/problem.ts';
import {
  IdParam,
  IncludeQuery,
  linkNext,
  listStart,
  PageQuery,
  pageResponse,
  pageStart,
  responseHeader,
  TemplateListQuery,
} from '../schemas.ts';

// Routes of /v1/templates: create, read, list, update, delete, revisions, rollback, usage, image check, repin.

const params = IdParam('templateId', 'template');
const tags = ['templates'];

/** The 200 of an operation that answers with one template, with its ETag. */
const oneTemplate = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { etag: responseHeader.etag, ...headers },
  content: { 'application/json': { schema: Type.Ref(Template) } },
});

/** The conditions a write to a template may carry. */
const conditions = { 'if-match': ifMatchHeader, 'if-none-match': ifNoneMatchHeader(false) };
const Conditions = Type.Object(conditions, { additionalProperties: true });
const IdempotencyKey = idempotencyKeyHeader('a repeat with the same key and body gets the first response again (kept 24 h).');

/** Sends JSON text kept ready beside each template (see `templateJson`): the response schema's serializer is not run again. */
const sendJson = (reply: FastifyReply, json: string) => reply.type('application/json; charset=utf-8').send(json);

/** A page this large is written item by item rather than joined first: one copy of it less held per request. */
const STREAMED_PAGE_CHARS = 1 << 20;

/**
 * Sends JSON texts as a JSON array. A page of large templates (up to PAGE_MAX_BYTES) is written to the socket an item
 * at a time, so that four such pages at once don't each hold their items, the joined text and its bytes together.
 */
function sendJsonArray(reply: FastifyReply, items: string[]) {
  let chars = 0;
  for (const item of items) chars += item.length;
  if (chars < STREAMED_PAGE_CHARS) return sendJson(reply, `[${items.join(',')}]`);
  function* parts() {
    yield '[';
    for (let i = 0; i < items.length; i++) {
      if (i > 0) yield ',';
      yield items[i] as string;
    }
    yield ']';
  }
  return reply.type('application/json; charset=utf-8').send(Readable.from(parts(), { objectMode: false }));
}
const sendTemplate = (reply: FastifyReply, template: TemplateRecord) => reply.header('etag', etagOf(template)).send(template);
const outcome = (template: TemplateRecord) => ({ payload: template, headers: { etag: etagOf(template) } });
const created = (template: TemplateRecord) => ({
  payload: template,
  headers: { etag: etagOf(template), location: `/v1/templates/${template.id}` },
});

export const templateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { templates, imageChecks } = app.podplate;
  const trimBody = async (request: { body: unknown }) => trimName(request.body);

  app.post('/templates', {
    preValidation: trimBody,
    schema: {
      tags,
      operationId: 'CreateTemplate',
      summary: 'Create a template',
      description: 'Creates a template owned by the caller; with a platform key, an official one (`isPlatform: true`).',
      headers: Type.Object(IdempotencyKey, { additionalProperties: true }),
      body: Type.Ref(TemplateCreate),
      response: {
        200: oneTemplate('The new template; a retry with the same Idempotency-Key gets it again.', {
          location: responseHeader.location,
          'idempotent-replayed': responseHeader.idempotentReplayed,
        }),
        ...problemResponses(400, 401, FORBIDDEN_OR_QUOTA, 409, 413, 415, 422, 429, 503),
      },
    },
    handler: async (request, reply) =>
      sendAnswer(reply, await templates.create(request.caller, request.body, idempotencyOf(request, reply, created)), created),
  });

  app.get('/templates', {
    schema: {
      tags,
      operationId: 'ListTemplates',
      summary: 'List templates',
      description:
        'The templates the caller can see with the given flags (or in one `scope`), newest or most used first, as a bare array. ' +
        'When more follow, a `Link: <…>; rel="next"` header gives the next page.',
      querystring: TemplateListQuery,
      response: {
        200: pageResponse(Type.Ref(TemplateListItem), "One page of templates, each with its owner's account name."),
        ...problemResponses(400, 401, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const { limit = 100, cursor, ...filters } = request.query;
      const page = await templates.list(request.caller, { ...filters, limit, before: listStart(cursor) });
      linkNext(request, reply, page.next);
      return sendJsonArray(reply, page.items);
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
      headers: Type.Object({ 'if-none-match': ifNoneMatchHeader(true) }, { additionalProperties: true }),
      response: {
        200: oneTemplate('The template.'),
        304: {
          type: 'null',
          description: 'Not modified: the template is still at a revision If-None-Match names.',
          headers: { etag: responseHeader.etag },
        },
        ...problemResponses(400, 401, 404, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const view = await templates.get(request.caller, request.params.templateId, request.query);
      const etag = etagOf(view);
      // Only a template the caller may see is compared: any other is a 404 whatever the header says.
      if (notModified(request.headers, etag)) return reply.code(304).header('etag', etag).send();
      return sendJson(reply.header('etag', etag), view.json);
    },
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
          'A partial update by the owner: absent fields keep their value. A change makes a new revision and starts a ' +
          'rolling release on the endpoint bound to the template; an update that changes nothing changes nothing.',
        params,
        headers: Conditions,
        body: Type.Ref(TemplateUpdate),
        response: {
          200: oneTemplate('The template after the update.'),
          ...problemResponses(400, 401, FORBIDDEN_OR_QUOTA, 404, 409, 412, 413, 415, 429, 503),
        },
      },
      handler: async (request, reply) => {
        const precondition = preconditionFrom(request.headers);
        return sendTemplate(reply, await templates.update(request.caller, request.params.templateId, request.body, precondition));
      },
    });
  }

  app.delete('/templates/:templateId', {
    schema: {
      tags,
      operationId: 'DeleteTemplate',
      summary: 'Delete a template',
      description: 'Deletes a template of the caller, with its revisions. A template bound to an endpoint cannot be deleted (409).',
      params,
      headers: Conditions,
      response: { 204: Type.Null({ description: 'Deleted.' }), ...problemResponses(400, 401, 403, 404, 409, 412, 429, 503) },
    },
    handler: async (request, reply) => {
      const precondition = preconditionFrom(request.headers);
      await templates.delete(request.caller, request.params.templateId, precondition);
      return reply.code(204).send(null);
    },
  });

  app.get('/templates/:templateId/revisions', {
    schema: {
      tags,
      operationId: 'ListTemplateRevisions',
      summary: "List a template's revisions",
      description:
        'The revisions a template of the caller keeps, newest first: a full snapshot, its diff against the revision ' +
        'before, which key made it and when. A template keeps its newest `REVISIONS_KEPT_PER_TEMPLATE` (100 by default); ' +
        'the list ends at the oldest kept. A `Link: <…>; rel="next"` header gives the next page.',
      params,
      querystring: PageQuery,
      response: {
        200: pageResponse(Type.Ref(Revision), 'One page of revisions.'),
        ...problemResponses(400, 401, 403, 404, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const { limit = 100, cursor } = request.query;
      const page = await templates.revisions(request.caller, request.params.templateId, limit, pageStart(cursor));
      linkNext(request, reply, page.next);
      return page.items.map(({ snapshot, templateId: _id, ...revision }) => ({ ...revision, template: snapshot }));
    },
  });

  app.post('/templates/:templateId/rollback', {
    schema: {
      tags,
      operationId: 'RollbackTemplate',
      summary: 'Roll a template back to an earlier revision',
      description:
        'Makes a new revision whose content equals revision `revision` (category and Serverless-ness never change), and ' +
        'starts a rolling release like any change. Rolling back to content equal to the current one changes nothing. ' +
        'A revision no longer kept (older than the newest `REVISIONS_KEPT_PER_TEMPLATE`) is a 409 naming `/revision`.',
      params,
      headers: Type.Object({ ...conditions, ...IdempotencyKey }, { additionalProperties: true }),
      body: Type.Ref(RollbackInput),
      response: {
        200: oneTemplate('The template after the rollback; a retry with the same Idempotency-Key gets it again.', {
          'idempotent-replayed': responseHeader.idempotentReplayed,
        }),
        ...problemResponses(400, 401, FORBIDDEN_OR_QUOTA, 404, 409, 412, 413, 415, 422, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const precondition = preconditionFrom(request.headers);
      const { templateId } = request.params;
      const once = idempotencyOf(request, reply, outcome);
      return sendAnswer(reply, await templates.rollback(request.caller, templateId, request.body.revision, precondition, once), outcome);
    },
  });

  app.post('/templates/:templateId/image-check', {
    schema: {
      tags,
      operationId: 'CheckTemplateImage',
      summary: "Check a template's image now",
      description:
        "Reads the template's image at its registry now (its pinned digest, else its tag), with its registry auth, and answers " +
        'the template with `imageCheck` as found; a check of it under way elsewhere is waited for. The owner or a platform key. ' +
        'With IMAGE_CHECK=off the template is answered as it is (`off`). Beyond IMAGE_CHECKS_PER_ACCOUNT_PER_MINUTE, a 429.',
      params,
      response: {
        200: oneTemplate('The template with the image check just made.'),
        ...problemResponses(400, 401, 403, 404, 429, 503),
      },
    },
    handler: async (request, reply) => sendTemplate(reply, await imageChecks.checkNow(request.caller, request.params.templateId)),
  });

  app.post('/templates/:templateId/repin', {
    schema: {
      tags,
      operationId: 'RepinTemplateImage',
      summary: 'Pin a template to the digest its tag serves now',
      description:
        "Reads the template's tag at its registry again. A digest other than the current revision's makes a new revision " +
        'pinned to it, whose diff shows `imageDigest` changing, and starts a rolling release on its endpoint; the same digest ' +
        'changes nothing. A tag that gives no verified image (no such tag, refused credentials, no linux/amd64 image, larger ' +
        'than the container disk) is a 409 saying why; an unreachable registry a 503. The owner only.',
      params,
      headers: Conditions,
      response: {
        200: oneTemplate('The template, pinned to the digest its tag serves.'),
        ...problemResponses(400, 401, 403, 404, 409, 412, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const precondition = preconditionFrom(request.headers);
      return sendTemplate(reply, await imageChecks.repin(request.caller, request.params.templateId, precondition));
    },
  });

  app.post('/templates/:templateId/usage', {
    schema: {
      tags,
      operationId: 'ReportTemplateUsage',
      summary: 'Report usage of a template (platform keys)',
      description:
        "Adds `runtimeInMin` and `earned` to the template's totals. A usageId is counted once: repeating a report changes " +
        'nothing; reusing its usageId with other values is a 409.',
      params,
      body: Type.Ref(UsageReport),
      response: {
        200: oneTemplate('The template with its new totals.'),
        ...problemResponses(400, 401, 403, 404, 409, 413, 415, 429, 503),
      },
    },
    handler: async (request, reply) =>
      sendTemplate(reply, await templates.reportUsage(request.caller, request.params.templateId, request.body)),
  });
};
