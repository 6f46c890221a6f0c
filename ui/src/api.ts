import type { operations } from '../../src/client/schema.d.ts';
import {
  type Endpoint,
  type Me,
  nextLink,
  type Problem,
  type RegistryAuth,
  type Release,
  type Revision,
  type Secret,
  type Template,
  type TemplateListItem,
} from './model.ts';

// The REST API under /v1, called with the key from sessionStorage. Every failure becomes an ApiError carrying the
// problem body, so views can show its detail and put its field errors next to the fields.

const KEY = 'podplate.apiKey';

export const session = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
  }
  get status(): number {
    return this.problem.status;
  }
}

/** Called when the API says the key is not (or no longer) good: the app signs out. */
let onUnauthenticated: (problem: Problem) => void = () => {};
export const whenUnauthenticated = (handler: (problem: Problem) => void) => {
  onUnauthenticated = handler;
};

interface Answer<T> {
  data: T;
  headers: Headers;
}

async function call<T>(method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; key?: string } = {}) {
  const key = options.key ?? session.get();
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (key) headers.authorization = `Bearer ${key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  } catch {
    throw new ApiError({ type: 'about:blank', title: 'Network error', status: 0, detail: 'The server could not be reached.' });
  }
  const text = await response.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const problem: Problem =
      data && typeof data === 'object' && 'status' in data
        ? (data as Problem)
        : {
            type: 'about:blank',
            title: response.statusText || 'Error',
            status: response.status,
            detail: `The server answered ${response.status}.`,
          };
    if (response.status === 401 && !options.key) onUnauthenticated(problem);
    throw new ApiError(problem);
  }
  return { data: data as T, headers: response.headers } satisfies Answer<T>;
}

export interface Page<T> {
  items: T[];
  /** The URL of the next page, from the Link header. */
  next?: string;
}

async function page<T>(path: string): Promise<Page<T>> {
  const { data, headers } = await call<T[]>('GET', path);
  return { items: data, next: nextLink(headers.get('link')) };
}

/** Every item of a list, following its pages. */
async function all<T>(first: string): Promise<T[]> {
  const items: T[] = [];
  let next: string | undefined = first;
  while (next) {
    const one: Page<T> = await page<T>(next);
    items.push(...one.items);
    next = one.next;
  }
  return items;
}

type ListQuery = NonNullable<operations['ListTemplates']['parameters']['query']>;

export interface TemplateQuery {
  /** One scope in full pages: own, public (community) or platform (official). */
  scope?: NonNullable<ListQuery['scope']>;
  sort?: NonNullable<ListQuery['sort']>;
  includePublicTemplates?: boolean;
  includePlatformTemplates?: boolean;
  includeEndpointBoundTemplates?: boolean;
  category?: string;
  isServerless?: boolean;
  q?: string;
  limit?: number;
  cursor?: string;
}

export function query(params: object): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

const id = encodeURIComponent;
const ALL_FLAGS = { includePublicTemplates: true, includePlatformTemplates: true, includeEndpointBoundTemplates: true };

/** A template with its ETag, for a conditional write. */
export interface Versioned<T> {
  value: T;
  etag: string | null;
}
const versioned = <T>({ data, headers }: Answer<T>): Versioned<T> => ({ value: data, etag: headers.get('etag') });

/** Who the signed-in key is, asked once per key. */
let me: { key: string | null; answer: Promise<Me> } | undefined;

export const api = {
  me: (): Promise<Me> => {
    const key = session.get();
    if (me?.key !== key) me = { key, answer: call<Me>('GET', '/v1/me').then((a) => a.data) };
    return me.answer;
  },
  /**
   * Whether the signed-in account owns `t`. Asked of its own templates, searched by the name (unique among them), so
   * that a template of another account costs no refused request (its revisions would answer 403).
   */
  owns: async (t: Pick<Template, 'id' | 'name'>): Promise<boolean> => {
    const mine = await page<TemplateListItem>(
      `/v1/templates${query({ scope: 'own', includeEndpointBoundTemplates: true, q: t.name, limit: 1000 })}`,
    );
    return mine.items.some((item) => item.id === t.id);
  },
  /** Checks a key without signing in with it. */
  check: (key: string) => call<Template[]>('GET', '/v1/templates?limit=1', { key }),
  templates: (q: TemplateQuery) => page<TemplateListItem>(`/v1/templates${query(q)}`),
  /** A page by the URL a Link header gave. */
  templatesAt: (url: string) => page<TemplateListItem>(url),
  template: async (templateId: string) => versioned(await call<Template>('GET', `/v1/templates/${id(templateId)}${query(ALL_FLAGS)}`)),
  create: async (body: unknown) => versioned(await call<Template>('POST', '/v1/templates', { body })),
  update: async (templateId: string, body: unknown, etag: string | null) =>
    versioned(await call<Template>('PATCH', `/v1/templates/${id(templateId)}`, { body, headers: etag ? { 'if-match': etag } : {} })),
  remove: (templateId: string, etag: string | null) =>
    call<null>('DELETE', `/v1/templates/${id(templateId)}`, { headers: etag ? { 'if-match': etag } : {} }),
  revisions: (templateId: string, limit = 100) => page<Revision>(`/v1/templates/${id(templateId)}/revisions${query({ limit })}`),
  revisionsAt: (url: string) => page<Revision>(url),
  rollback: async (templateId: string, revision: number, etag: string | null) =>
    versioned(
      await call<Template>('POST', `/v1/templates/${id(templateId)}/rollback`, {
        body: { revision },
        headers: etag ? { 'if-match': etag } : {},
      }),
    ),
  endpoints: (cursor?: string) => page<Endpoint>(`/v1/endpoints${query({ limit: 50, cursor })}`),
  endpointsAt: (url: string) => page<Endpoint>(url),
  /** Checks the template's image at its registry now; the template with the result. */
  checkImage: async (templateId: string) => versioned(await call<Template>('POST', `/v1/templates/${id(templateId)}/image-check`)),
  endpoint: async (endpointId: string) => (await call<Endpoint>('GET', `/v1/endpoints/${id(endpointId)}`)).data,
  /** Every endpoint of the caller, all pages: which of its templates are live, and where. */
  allEndpoints: () => all<Endpoint>('/v1/endpoints?limit=100'),
  createEndpoint: async (body: unknown) => (await call<Endpoint>('POST', '/v1/endpoints', { body })).data,
  /** A partial update (PATCH): a new templateId rebinds the endpoint and starts a rolling release. */
  updateEndpoint: async (endpointId: string, body: unknown) =>
    (await call<Endpoint>('PATCH', `/v1/endpoints/${id(endpointId)}`, { body })).data,
  removeEndpoint: (endpointId: string) => call<null>('DELETE', `/v1/endpoints/${id(endpointId)}`),
  /** A template's revision by number (its content then), looked for down the pages of its history. */
  revision: async (templateId: string, revision: number) => {
    let next: string | undefined = `/v1/templates/${id(templateId)}/revisions?limit=100`;
    while (next) {
      const one: Page<Revision> = await page<Revision>(next);
      const found = one.items.find((r) => r.revision === revision);
      if (found || one.items.some((r) => r.revision < revision)) return found;
      next = one.next;
    }
    return undefined;
  },
  releases: (endpointId: string) => page<Release>(`/v1/endpoints/${id(endpointId)}/releases${query({ limit: 50 })}`),
  releasesAt: (url: string) => page<Release>(url),
  registryAuths: () => page<RegistryAuth>('/v1/containerregistryauth?limit=100'),
  registryAuthsAt: (url: string) => page<RegistryAuth>(url),
  /** Every registry auth of the caller, all pages (for the template form's select). */
  allRegistryAuths: () => all<RegistryAuth>('/v1/containerregistryauth?limit=1000'),
  registryAuth: async (authId: string) => (await call<RegistryAuth>('GET', `/v1/containerregistryauth/${id(authId)}`)).data,
  createRegistryAuth: async (body: { name: string; username: string; password: string }) =>
    (await call<RegistryAuth>('POST', '/v1/containerregistryauth', { body })).data,
  removeRegistryAuth: (authId: string) => call<null>('DELETE', `/v1/containerregistryauth/${id(authId)}`),
  secrets: () => page<Secret>('/v1/secrets?limit=100'),
  secretsAt: (url: string) => page<Secret>(url),
  /** The names of every secret of the caller, all pages (for the template form's picker). */
  allSecretNames: async () => {
    const names: string[] = [];
    let next: string | undefined = '/v1/secrets?limit=1000';
    while (next) {
      const one: Page<Secret> = await page<Secret>(next);
      names.push(...one.items.map((s) => s.name));
      next = one.next;
    }
    return names.sort();
  },
  /** Creates the secret, or replaces its value. */
  putSecret: async (name: string, value: string) => (await call<Secret>('PUT', `/v1/secrets/${id(name)}`, { body: { value } })).data,
  removeSecret: (name: string) => call<null>('DELETE', `/v1/secrets/${id(name)}`),
};
