import { createHash } from 'node:crypto';
import { type Dispatcher, request } from 'undici';
import { AddressRefused, type Reacher } from './guard.ts';

// A client of the OCI distribution API, only as far as the image check needs it: a manifest or an index by tag or
// digest, a config blob, and the registry's challenges (Basic, or a Bearer token from the realm it names). Every
// request goes through the Reacher's rules, redirects included; every answer is bounded in size and time.

export const MEDIA = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;
const ACCEPT = [MEDIA.ociIndex, MEDIA.ociManifest, MEDIA.dockerList, MEDIA.dockerManifest].join(', ');

/** The most a manifest or an index may weigh (the distribution registry's own bound). */
export const MANIFEST_MAX_BYTES = 4 * 1024 * 1024;
/** The most an image's config may weigh. */
export const CONFIG_MAX_BYTES = 4 * 1024 * 1024;
/** The most a token answer may weigh. */
const TOKEN_MAX_BYTES = 64 * 1024;
/** Redirects followed at most, each under the same rules. */
export const MAX_REDIRECTS = 3;

/** Why a request to a registry gave nothing: each is told to a person as the check's reason. */
export class RegistryError extends Error {
  readonly kind: 'not-found' | 'denied' | 'refused' | 'unreachable';

  constructor(kind: RegistryError['kind'], message: string) {
    super(message);
    this.kind = kind;
    this.name = 'RegistryError';
  }
}

export interface Credentials {
  username: string;
  password: string;
}

/** A document read from the registry: its bytes' digest and its JSON. */
export interface Fetched {
  digest: string;
  mediaType: string;
  json: unknown;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const header = (headers: Answer['headers'], name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/** The parameters of one challenge of a WWW-Authenticate header (RFC 9110 auth-params; the scheme lowercased). */
export function parseChallenge(value: string): { scheme: string; params: Record<string, string> } | undefined {
  const match = /^\s*([A-Za-z][\w-]*)\s*(.*)$/s.exec(value);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  const pattern = /([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?\s*/gy;
  const rest = match[2] ?? '';
  let param: RegExpExecArray | null = pattern.exec(rest);
  while (param) {
    params[(param[1] as string).toLowerCase()] = param[2] !== undefined ? param[2].replace(/\\(.)/g, '$1') : (param[3] ?? '');
    param = pattern.exec(rest);
  }
  return { scheme: (match[1] as string).toLowerCase(), params };
}

export interface RegistryOptions {
  reacher: Reacher;
  /** The whole of one request (headers and body) must arrive within this time. */
  requestTimeoutMs: number;
  /** Ends every request of the check at once: the check's own deadline. */
  deadline?: AbortSignal;
  /** The registry's API root: `https://registry-1.docker.io` for Docker Hub. */
  origin: string;
  repository: string;
  credentials: Credentials | null;
}

/** One repository of one registry, with the authorization it earned kept for the requests after. */
export class RegistrySession {
  private readonly options: RegistryOptions;
  private authorization: string | undefined;

  constructor(options: RegistryOptions) {
    this.options = options;
  }

  /** The manifest or index `reference` (a tag or a digest) names. */
  manifest(reference: string): Promise<Fetched> {
    return this.document(`/v2/${this.options.repository}/manifests/${reference}`, ACCEPT, MANIFEST_MAX_BYTES, 'manifest');
  }

  /** The blob `digest` names, as JSON (an image's config). */
  blob(digest: string): Promise<Fetched> {
    return this.document(`/v2/${this.options.repository}/blobs/${digest}`, '*/*', CONFIG_MAX_BYTES, 'config');
  }

  private async document(path: string, accept: string, maxBytes: number, what: string): Promise<Fetched> {
    let answer = await this.get(new URL(path, this.options.origin), accept, maxBytes);
    if (answer.status === 401) {
      await this.authorize(header(answer.headers, 'www-authenticate'));
      answer = await this.get(new URL(path, this.options.origin), accept, maxBytes);
      if (answer.status === 401) throw this.denied();
    }
    if (answer.status === 403) throw this.denied();
    if (answer.status === 404) throw new RegistryError('not-found', `The registry has no such ${what}.`);
    if (answer.status === 429 || answer.status >= 500) {
      throw new RegistryError('unreachable', `The registry at ${this.host} answered HTTP ${answer.status}; the check is retried later.`);
    }
    if (answer.status !== 200)
      throw new RegistryError('refused', `The registry at ${this.host} answered the ${what} with HTTP ${answer.status}.`);
    let json: unknown;
    try {
      json = JSON.parse(answer.body.toString('utf8'));
    } catch {
      throw new RegistryError('refused', `The registry at ${this.host} sent a ${what} that is not JSON.`);
    }
    const mediaType = (header(answer.headers, 'content-type') ?? '').split(';')[0]?.trim() ?? '';
    return { digest: `sha256:${createHash('sha256').update(answer.body).digest('hex')}`, mediaType, json };
  }

  private get host(): string {
    return new URL(this.options.origin).host;
  }

  private denied(): RegistryError {
    return new RegistryError('denied', this.options.credentials ? 'credentials refused' : 'credentials needed');
  }

  /** Answers a challenge: Basic with the credentials, or Bearer with a token from the realm (anonymous without them). */
  private async authorize(value: string | undefined): Promise<void> {
    const challenge = value ? parseChallenge(value) : undefined;
    const credentials = this.options.credentials;
    const basic = credentials && `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    if (challenge?.scheme === 'basic') {
      if (!basic) throw this.denied();
      this.authorization = basic;
      return;
    }
    if (challenge?.scheme !== 'bearer' || !challenge.params.realm) {
      throw new RegistryError('refused', `The registry at ${this.host} asked for an authorization the check does not speak.`);
    }
    let realm: URL;
    try {
      realm = new URL(challenge.params.realm);
    } catch {
      throw new RegistryError('refused', `The registry at ${this.host} named a token service that is not a URL.`);
    }
    if (challenge.params.service) realm.searchParams.set('service', challenge.params.service);
    realm.searchParams.set('scope', challenge.params.scope ?? `repository:${this.options.repository}:pull`);
    const answer = await this.get(realm, 'application/json', TOKEN_MAX_BYTES, basic ?? undefined);
    if (answer.status === 401 || answer.status === 403) throw this.denied();
    if (answer.status === 429 || answer.status >= 500) {
      throw new RegistryError('unreachable', `The token service of the registry at ${this.host} answered HTTP ${answer.status}.`);
    }
    let token: unknown;
    try {
      const json = JSON.parse(answer.body.toString('utf8')) as { token?: unknown; access_token?: unknown };
      token = json.token ?? json.access_token;
    } catch {
      token = undefined;
    }
    if (answer.status !== 200 || typeof token !== 'string' || token === '' || /[\r\n]/.test(token)) {
      throw new RegistryError('refused', `The token service of the registry at ${this.host} gave no token (HTTP ${answer.status}).`);
    }
    this.authorization = `Bearer ${token}`;
  }

  /**
   * One GET, following at most MAX_REDIRECTS redirects, each reached under the Reacher's rules; the authorization goes
   * only to the registry's own origin (`authorization` overrides it, for the token realm).
   */
  private async get(url: URL, accept: string, maxBytes: number, authorization?: string): Promise<Answer> {
    const origin = url.origin;
    let target = url;
    for (let redirects = 0; ; redirects++) {
      const reach = this.options.reacher.reach(target);
      if ('refused' in reach) throw new RegistryError('refused', reach.refused);
      const auth =
        target.origin === origin ? (authorization ?? (origin === this.options.origin ? this.authorization : undefined)) : undefined;
      const headers: Record<string, string> = { accept, 'user-agent': 'podplate-image-check/1' };
      if (auth) headers.authorization = auth;
      const answer = await this.send(target, headers, reach.dispatcher, maxBytes);
      const location = header(answer.headers, 'location');
      if (answer.status < 300 || answer.status >= 400 || answer.status === 304 || !location) return answer;
      if (redirects >= MAX_REDIRECTS)
        throw new RegistryError('refused', `The registry at ${this.host} redirected more than ${MAX_REDIRECTS} times.`);
      try {
        target = new URL(location, target);
      } catch {
        throw new RegistryError('refused', `The registry at ${this.host} redirected to something that is not a URL.`);
      }
    }
  }

  private async send(url: URL, headers: Record<string, string>, dispatcher: Dispatcher, maxBytes: number): Promise<Answer> {
    const timeout = AbortSignal.timeout(this.options.requestTimeoutMs);
    const signal = this.options.deadline ? AbortSignal.any([timeout, this.options.deadline]) : timeout;
    try {
      const response = await request(url, { method: 'GET', headers, dispatcher, signal });
      const length = Number(response.headers['content-length'] ?? 0);
      const redirect = response.statusCode >= 300 && response.statusCode < 400;
      if (response.statusCode !== 200 || redirect) {
        // Nothing a registry says beyond its status is read, shown or logged.
        await response.body.dump({ limit: 0 }).catch(() => {});
        return { status: response.statusCode, headers: response.headers, body: Buffer.alloc(0) };
      }
      if (length > maxBytes) {
        await response.body.dump({ limit: 0 }).catch(() => {});
        throw new RegistryError('refused', `The registry at ${url.host} sent ${length} bytes where at most ${maxBytes} are read.`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          response.body.destroy();
          throw new RegistryError('refused', `The registry at ${url.host} sent more than the ${maxBytes} bytes that are read.`);
        }
        chunks.push(chunk as Buffer);
      }
      return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) };
    } catch (error) {
      throw asRegistryError(error, url.host, this.options.requestTimeoutMs);
    }
  }
}

/** A failure of the network as a RegistryError with a reason of ours: never a library's or the registry's text. */
function asRegistryError(error: unknown, host: string, timeoutMs: number): RegistryError {
  if (error instanceof RegistryError) return error;
  const chain: unknown[] = [];
  for (let e: unknown = error; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  const refused = chain.find((e) => e instanceof AddressRefused) as AddressRefused | undefined;
  if (refused) return new RegistryError('refused', refused.message);
  const codes = new Set(chain.map((e) => (e as { code?: string }).code).filter(Boolean));
  const names = new Set(chain.map((e) => (e as { name?: string }).name));
  const unreachable = (text: string) => new RegistryError('unreachable', text);
  if (
    names.has('TimeoutError') ||
    names.has('AbortError') ||
    codes.has('UND_ERR_CONNECT_TIMEOUT') ||
    codes.has('UND_ERR_HEADERS_TIMEOUT')
  ) {
    return unreachable(`The registry at ${host} did not answer within ${Math.round(timeoutMs / 1000)} s.`);
  }
  if (codes.has('ENOTFOUND') || codes.has('EAI_AGAIN'))
    return unreachable(`The registry host ${host.replace(/:\d+$/, '')} was not found (DNS).`);
  if (codes.has('ECONNREFUSED')) return unreachable(`The registry at ${host} refused the connection.`);
  if (codes.has('ECONNRESET') || codes.has('UND_ERR_SOCKET')) return unreachable(`The registry at ${host} closed the connection.`);
  if (
    [...codes].some(
      (code) => typeof code === 'string' && (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code.includes('CERT')),
    )
  ) {
    return unreachable(
      `The registry at ${host} offered no TLS connection the check trusts (plain http only for hosts in IMAGE_CHECK_INSECURE_REGISTRIES).`,
    );
  }
  return unreachable(`The registry at ${host} could not be reached.`);
}
