import { type TSchema, type TString, Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../domain/errors.ts';
import { NO_CONTROL_CHARACTERS } from '../domain/name.ts';
import { LIST_SCOPES, LIST_SORTS, type ListPosition, type ListScope, type ListSort } from '../domain/page.ts';
import { CATEGORIES } from '../domain/template.ts';

// Schemas of the HTTP surface that are not resources: path ids, flags, paging, response headers.

/** The response headers the service sends, each declared once, with its schema, for the OpenAPI document. */
export const responseHeader = {
  etag: Type.String({
    description:
      'The revision of the template (`"r3"` for revision 3), followed once its image was checked by the check\'s status and ' +
      'time (`"r3.v1ml2q8gk"`): for If-None-Match on reads, and If-Match on writes (which compare the revision).',
    examples: ['"r3"', '"r3.v1ml2q8gk"'],
  }),
  location: Type.String({ format: 'uri-reference', description: 'Where the new resource is, relative to the server.' }),
  link: Type.String({
    description:
      'The next page, when there is one: `<…>; rel="next"`, a URL relative to the server with the same filters and a `cursor`. ' +
      'Absent on the last page.',
    examples: ['</v1/templates?limit=100&cursor=cDE3>; rel="next"'],
  }),
  nextPage: Type.String({
    format: 'uri-reference',
    description:
      'The same next page as `Link`, plainly: a URL relative to the server, there whenever more follow. A client written ' +
      "for a list without paging (RunPod's v1) reads only this first page: follow this header until it is absent.",
    examples: ['/v1/templates?cursor=cDE3'],
  }),
  retryAfter: Type.Integer({ minimum: 0, description: 'Seconds to wait before trying again.' }),
  idempotentReplayed: Type.Literal('true', {
    description: 'This is the response to an earlier request with the same Idempotency-Key, sent again; the write was not repeated.',
  }),
  wwwAuthenticate: Type.String({ description: 'How to authenticate: `Bearer realm="podplate"`.' }),
};

/** The 200 of a paged list: one page of `items`, the next one announced in `Link` and `X-Next-Page`. */
export const pageResponse = (items: TSchema, description: string) => ({
  description,
  headers: { link: responseHeader.link, 'x-next-page': responseHeader.nextPage },
  content: { 'application/json': { schema: Type.Array(items) } },
});

export const IdParam = <K extends string>(name: K, what: string) =>
  Type.Object(
    {
      [name]: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', errorMessage: 'is not a valid id', description: `ID of the ${what}.` }),
    } as Record<K, TString>,
    { additionalProperties: false },
  );

const flag = (description: string) =>
  Type.Optional(Type.Boolean({ default: false, description: `${description} Only \`true\` or \`false\`.` }));

export const includeFlags = {
  includeEndpointBoundTemplates: flag('Include templates bound to Serverless endpoints.'),
  includePublicTemplates: flag('Include community-made public templates of other accounts.'),
  includePlatformTemplates: flag('Include official platform templates.'),
};

export const IncludeQuery = Type.Object(includeFlags, { additionalProperties: false });

export const paging = {
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 100,
      description:
        'Most items in the page. A page may hold fewer, or none, and still announce the next in `Link`: follow it until it is absent.',
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      errorMessage: 'is not a cursor; use the one from the Link header of the page before',
      description: 'Where the page starts: taken from the `Link: <…>; rel="next"` header of the page before.',
    }),
  ),
};

export const TemplateListQuery = Type.Object(
  {
    ...includeFlags,
    scope: Type.Optional(
      Type.Unsafe<ListScope>({
        type: 'string',
        enum: [...LIST_SCOPES],
        description:
          "Only one scope, read down its own index: `own` the caller's templates, `platform` " +
          "every official template the caller may see, `public` every public community template (the caller's own " +
          'included). The scope decides which templates are listed: `includePublicTemplates` and ' +
          '`includePlatformTemplates` are then ignored; `includeEndpointBoundTemplates` still applies.',
      }),
    ),
    sort: Type.Optional(
      Type.Unsafe<ListSort>({
        type: 'string',
        enum: [...LIST_SORTS],
        default: 'newest',
        description:
          '`newest` first, or `popular`: most runtime (`runtimeInMin`) first. `popular` needs `scope=public` or `scope=platform`.',
      }),
    ),
    category: Type.Optional(
      Type.Unsafe<string>({ type: 'string', enum: [...CATEGORIES], description: 'Only templates of this category.' }),
    ),
    isServerless: Type.Optional(Type.Boolean({ description: 'Only Serverless (`true`) or only Pod (`false`) templates.' })),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: NO_CONTROL_CHARACTERS,
        errorMessage: 'must not contain control characters',
        description:
          'Only templates whose name or image contains this text, ignoring case. A text of 1 or 2 characters is looked ' +
          'for in at most 10,000 templates of each scope a page: such a page may hold fewer than `limit` templates, or ' +
          'none, and still announce the next in `Link`.',
      }),
    ),
    ...paging,
  },
  { additionalProperties: false },
);

export const PageQuery = Type.Object(paging, { additionalProperties: false });

/** The query of an operation that takes no parameters: any parameter is refused by name, as everywhere else. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** Cursors are opaque to clients; inside, one is a position in the newest-first order (or, `r…`, the popular one). */
const encodeCursor = (position: number | ListPosition) =>
  Buffer.from(
    typeof position === 'number'
      ? `p${position}`
      : position.runtime === undefined
        ? `p${position.seq}`
        : `r${position.runtime}.${position.seq}`,
  ).toString('base64url');

const notACursor = () =>
  invalid('The cursor is not valid.', [{ in: 'query', path: '/cursor', message: 'is not a cursor this service issued' }]);

/** Where a page starts, from its `cursor` parameter; a 400 for a cursor this service did not issue. */
export function pageStart(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^p([0-9]{1,15})$/.exec(Buffer.from(value, 'base64url').toString('latin1'));
  if (!match) throw notACursor();
  return Number(match[1]);
}

/** Where a page of templates starts: a position in the newest-first order, or in the popular one. */
export function listStart(value: string | undefined): ListPosition | undefined {
  if (value === undefined) return undefined;
  const text = Buffer.from(value, 'base64url').toString('latin1');
  const popular = /^r([0-9]{1,15})\.([0-9]{1,15})$/.exec(text);
  if (popular) return { runtime: Number(popular[1]), seq: Number(popular[2]) };
  return { seq: pageStart(value) as number };
}

/**
 * Announces the next page, if any, by a URL that repeats the request's own filters: in `Link` for clients that page,
 * and in `X-Next-Page`, plainly, for the person who reads the answer of a client that doesn't (RunPod's v1 list has no
 * paging, so its clients take the first page for the whole list).
 */
export function linkNext(request: FastifyRequest, reply: FastifyReply, next: number | ListPosition | undefined): void {
  if (next === undefined) return;
  const url = new URL(request.url, 'http://podplate');
  url.searchParams.set('cursor', encodeCursor(next));
  const relative = `${url.pathname}${url.search}`;
  reply.header('link', `<${relative}>; rel="next"`).header('x-next-page', relative);
}
