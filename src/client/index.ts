import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

// The typed Podplate client: openapi-fetch over types generated from the service's own OpenAPI document
// (`npm run gen:client`), with problem details thrown as PodplateProblem and Link-header paging as async iterators.

export type { components, operations, paths } from './schema.d.ts';

type Schemas = components['schemas'];
export type Template = Schemas['Template'];
export type TemplateCreate = Schemas['TemplateCreateInput'];
export type TemplateUpdate = Schemas['TemplateUpdateInput'];
export type Revision = Schemas['Revision'];
export type Endpoint = Schemas['Endpoint'];
export type EndpointCreate = Schemas['EndpointCreateInput'];
export type EndpointUpdate = Schemas['EndpointUpdateInput'];
export type Me = Schemas['Me'];
export type Account = Schemas['Account'];
export type AccountCreate = Schemas['AccountCreateInput'];
export type ApiKey = Schemas['ApiKey'];
export type ApiKeyCreate = Schemas['ApiKeyCreateInput'];
export type CreatedApiKey = Schemas['CreatedApiKey'];
export type Release = Schemas['Release'];
export type ReleaseProgress = Schemas['ReleaseProgress'];
export type RegistryAuth = Schemas['ContainerRegistryAuth'];
export type RegistryAuthCreate = Schemas['ContainerRegistryAuthCreateInput'];
export type RegistryAuthCredentials = Schemas['ContainerRegistryAuthCredentials'];
export type Secret = Schemas['Secret'];
export type ResolvedTemplate = Schemas['ResolvedTemplate'];
export type Problem = Schemas['Problem'];
export type FieldProblem = NonNullable<Problem['errors']>[number];
export type TemplateListQuery = NonNullable<operations['ListTemplates']['parameters']['query']>;

/** An RFC 9457 problem the service answered with: its status, kind, and each offending field. */
export class PodplateProblem extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldProblem[];

  constructor(status: number, body: unknown) {
    const problem = isProblem(body) ? body : undefined;
    const title = problem?.title ?? `HTTP ${status}`;
    const detail = problem?.detail ?? (typeof body === 'string' && body ? body.slice(0, 500) : 'The server gave no detail.');
    super(`${title}: ${detail}`);
    this.name = 'PodplateProblem';
    this.status = status;
    this.type = problem?.type ?? 'about:blank';
    this.title = title;
    this.detail = detail;
    this.errors = problem?.errors ?? [];
  }
}

/** The service could not be reached at all (refused, unresolvable, reset). */
export class PodplateConnectionError extends Error {
  readonly url: string;

  constructor(url: string, cause: unknown) {
    const reason = (cause as { cause?: { message?: string } })?.cause?.message ?? (cause as Error)?.message ?? String(cause);
    super(`cannot reach ${url}: ${reason}`, { cause });
    this.url = url;
    this.name = 'PodplateConnectionError';
  }
}

/** `http://…` or `https://…` with a host. */
/** The service's URL as given, with or without the API's `/v1` and trailing slashes. */
export const serviceUrl = (url: string): string => url.replace(/\/+$/, '').replace(/\/v1$/, '').replace(/\/+$/, '');

export function isHttpUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.host !== '';
  } catch {
    return false;
  }
}

function isProblem(body: unknown): body is Problem {
  const b = body as Partial<Problem> | null;
  return typeof b === 'object' && b !== null && typeof b.title === 'string' && typeof b.status === 'number';
}

export interface ClientOptions {
  /** The service's base URL, e.g. `https://podplate.example.com` (without `/v1`). */
  url: string;
  /** An API key, `pp_…`. */
  apiKey: string;
  /** Another fetch, for tests or proxies, called with a Request; the global fetch by default. */
  fetch?: (request: Request) => Promise<Response>;
  /** Sent as User-Agent. */
  userAgent?: string;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of an answer, or its problem thrown. */
function unwrap<T>({ data, error, response }: Answer<T>): T {
  if (!response.ok) throw new PodplateProblem(response.status, error);
  return data as T;
}

/** The `cursor` of the `Link: <…>; rel="next"` header, if another page follows. */
export function nextCursor(response: Response): string | undefined {
  const link = response.headers.get('link');
  if (!link) return undefined;
  for (const part of link.split(',')) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(part);
    if (match) return new URL(match[1] as string, 'http://podplate').searchParams.get('cursor') ?? undefined;
  }
  return undefined;
}

/** Every item of a paged list, fetching pages as they are consumed. */
export async function* allPages<T>(page: (cursor: string | undefined) => Promise<Answer<T[]>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    yield* unwrap(answer);
    cursor = nextCursor(answer.response);
  } while (cursor !== undefined);
}

/** One page and the cursor of the next, if any. */
export interface Page<T> {
  items: T[];
  next?: string;
}

async function onePage<T>(answer: Promise<Answer<T[]>>): Promise<Page<T>> {
  const a = await answer;
  return { items: unwrap(a), next: nextCursor(a.response) };
}

/** A written template with the ETag of its revision, for a later `ifMatch`. */
export interface Versioned<T> {
  value: T;
  etag: string;
}

const versioned = <T>(answer: Answer<T>): Versioned<T> => ({ value: unwrap(answer), etag: answer.response.headers.get('etag') ?? '' });

export interface WriteOptions {
  /** The ETag the write is based on: the write fails with 412 if the template changed since. */
  ifMatch?: string;
  /** Retry safely: the same key and body get the first answer again. */
  idempotencyKey?: string;
}

const headersOf = (o: WriteOptions = {}) => ({
  ...(o.ifMatch ? { 'if-match': o.ifMatch } : {}),
  ...(o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : {}),
});

export type PodplateClient = ReturnType<typeof createPodplateClient>;

/** A client for one service and key. `api` is the raw typed openapi-fetch client for anything not wrapped here. */
export function createPodplateClient(options: ClientOptions) {
  const base = serviceUrl(options.url);
  if (!isHttpUrl(base)) throw new TypeError(`the service URL must be an http(s) URL, not ${JSON.stringify(options.url)}`);
  const fetchImpl = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api: Client<paths> = createClient<paths>({
    baseUrl: base,
    headers: { authorization: `Bearer ${options.apiKey}`, ...(options.userAgent ? { 'user-agent': options.userAgent } : {}) },
    fetch: async (request: Request) => {
      try {
        return await fetchImpl(request);
      } catch (error) {
        throw new PodplateConnectionError(base, error);
      }
    },
  });
  const id = <K extends string>(name: K, value: string) => ({ path: { [name]: value } as Record<K, string> });

  return {
    api,
    url: base,

    listTemplates: (query: TemplateListQuery = {}) =>
      allPages((cursor) => api.GET('/v1/templates', { params: { query: { ...query, cursor } } })),
    listTemplatesPage: (query: TemplateListQuery = {}) => onePage(api.GET('/v1/templates', { params: { query } })),
    getTemplate: async (templateId: string, query: operations['GetTemplate']['parameters']['query'] = {}) =>
      versioned(await api.GET('/v1/templates/{templateId}', { params: { ...id('templateId', templateId), query } })),
    createTemplate: async (body: TemplateCreate, o: WriteOptions = {}) =>
      versioned(await api.POST('/v1/templates', { body, params: { header: headersOf(o) } })),
    updateTemplate: async (templateId: string, body: TemplateUpdate, o: WriteOptions = {}) =>
      versioned(await api.PATCH('/v1/templates/{templateId}', { body, params: { ...id('templateId', templateId), header: headersOf(o) } })),
    deleteTemplate: async (templateId: string, o: WriteOptions = {}) => {
      unwrap(await api.DELETE('/v1/templates/{templateId}', { params: { ...id('templateId', templateId), header: headersOf(o) } }));
    },
    listRevisions: (templateId: string, limit?: number) =>
      allPages((cursor) =>
        api.GET('/v1/templates/{templateId}/revisions', { params: { ...id('templateId', templateId), query: { limit, cursor } } }),
      ),
    rollbackTemplate: async (templateId: string, revision: number, o: WriteOptions = {}) =>
      versioned(
        await api.POST('/v1/templates/{templateId}/rollback', {
          body: { revision },
          params: { ...id('templateId', templateId), header: headersOf(o) },
        }),
      ),
    checkTemplateImage: async (templateId: string) =>
      versioned(await api.POST('/v1/templates/{templateId}/image-check', { params: id('templateId', templateId) })),
    repinTemplate: async (templateId: string, o: WriteOptions = {}) =>
      versioned(await api.POST('/v1/templates/{templateId}/repin', { params: { ...id('templateId', templateId), header: headersOf(o) } })),

    listEndpoints: (limit?: number) => allPages((cursor) => api.GET('/v1/endpoints', { params: { query: { limit, cursor } } })),
    getEndpoint: async (endpointId: string) =>
      unwrap(await api.GET('/v1/endpoints/{endpointId}', { params: id('endpointId', endpointId) })),
    createEndpoint: async (body: EndpointCreate) => unwrap(await api.POST('/v1/endpoints', { body })),
    updateEndpoint: async (endpointId: string, body: EndpointUpdate) =>
      unwrap(await api.PATCH('/v1/endpoints/{endpointId}', { body, params: id('endpointId', endpointId) })),
    me: async () => unwrap(await api.GET('/v1/me')),
    deleteEndpoint: async (endpointId: string) => {
      unwrap(await api.DELETE('/v1/endpoints/{endpointId}', { params: id('endpointId', endpointId) }));
    },
    listReleases: (endpointId: string, limit?: number) =>
      allPages((cursor) =>
        api.GET('/v1/endpoints/{endpointId}/releases', { params: { ...id('endpointId', endpointId), query: { limit, cursor } } }),
      ),
    listReleasesPage: (endpointId: string, limit?: number, cursor?: string) =>
      onePage(api.GET('/v1/endpoints/{endpointId}/releases', { params: { ...id('endpointId', endpointId), query: { limit, cursor } } })),
    listRegistryAuths: (limit?: number) =>
      allPages((cursor) => api.GET('/v1/containerregistryauth', { params: { query: { limit, cursor } } })),
    createRegistryAuth: async (body: RegistryAuthCreate) => unwrap(await api.POST('/v1/containerregistryauth', { body })),
    getRegistryAuth: async (containerRegistryAuthId: string) =>
      unwrap(
        await api.GET('/v1/containerregistryauth/{containerRegistryAuthId}', {
          params: id('containerRegistryAuthId', containerRegistryAuthId),
        }),
      ),
    deleteRegistryAuth: async (containerRegistryAuthId: string) => {
      unwrap(
        await api.DELETE('/v1/containerregistryauth/{containerRegistryAuthId}', {
          params: id('containerRegistryAuthId', containerRegistryAuthId),
        }),
      );
    },
    /** Platform keys only: the username and password of a registry auth. */
    registryAuthCredentials: async (containerRegistryAuthId: string) =>
      unwrap(
        await api.GET('/v1/containerregistryauth/{containerRegistryAuthId}/credentials', {
          params: id('containerRegistryAuthId', containerRegistryAuthId),
        }),
      ),

    listSecrets: (limit?: number) => allPages((cursor) => api.GET('/v1/secrets', { params: { query: { limit, cursor } } })),
    /** Creates the caller's secret `name`, or replaces its value. */
    putSecret: async (name: string, value: string) =>
      unwrap(await api.PUT('/v1/secrets/{name}', { body: { value }, params: { path: { name } } })),
    deleteSecret: async (name: string) => {
      unwrap(await api.DELETE('/v1/secrets/{name}', { params: { path: { name } } }));
    },
    /** Platform keys only: the template as `account` launches it, its secret references resolved. */
    resolveTemplate: async (templateId: string, account: string) =>
      unwrap(await api.POST('/v1/templates/{templateId}/resolve', { body: { account }, params: id('templateId', templateId) })),

    /** Platform keys only: a new account (`role` `user` by default), to give keys with `createApiKey`. */
    createAccount: async (body: AccountCreate) => unwrap(await api.POST('/v1/accounts', { body })),
    /** A new key of `account` (a user key: its own account only); its `key` is shown in this answer only. */
    createApiKey: async (account: string, body: ApiKeyCreate = {}, options: Pick<WriteOptions, 'idempotencyKey'> = {}) =>
      unwrap(await api.POST('/v1/accounts/{account}/keys', { body, params: { path: { account }, header: headersOf(options) } })),
    /** The keys of `account` that are not revoked, never the keys themselves. */
    listApiKeys: async (account: string) => unwrap(await api.GET('/v1/accounts/{account}/keys', { params: { path: { account } } })),
    /** Revokes a key of `account`: refused by every process from then on. */
    revokeApiKey: async (account: string, keyId: string) => {
      unwrap(await api.DELETE('/v1/accounts/{account}/keys/{keyId}', { params: { path: { account, keyId } } }));
    },

    reportReleaseProgress: async (endpointId: string, releaseId: string, body: ReleaseProgress) =>
      unwrap(
        await api.POST('/v1/endpoints/{endpointId}/releases/{releaseId}/progress', {
          body,
          params: { path: { endpointId, releaseId } },
        }),
      ),
  };
}

/** Collects an async iterator (e.g. `listTemplates()`) into an array. */
export async function toArray<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}
