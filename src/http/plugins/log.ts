import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

// What the logs say of a request: one line when it is answered (its route, status, duration, account and key id),
// and never a key. The Authorization header is never logged; a key sent where it doesn't belong (`?api_key=pp_…`, a
// path, a search) would be, inside the URL, so logged URLs are redacted.

const REDACTED = '[redacted]';

/** Query parameters whose value is a secret by its name: api_key, access_token, password, client_secret, auth, … */
const SECRET_NAME = /key|token|secret|passw|pwd|auth|credential|signature|session|bearer|jwt/i;

/** An API key anywhere in a URL, its "_" maybe percent-encoded. (It may redact a little more than keys.) */
const KEY = /pp(?:_|%5f)(?:[A-Za-z0-9_-]|%[0-9a-f]{2})+/gi;

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return name;
  }
}

/** Whether a URL may hold something to redact: a key's start, a percent-escape (which may spell one, or a secret's
 * name), or a query in which a secret's name could be. */
const KEY_START = /pp(?:_|%5f)/i;
const mayHoldSecret = (url: string, start: number) =>
  KEY_START.test(url) || url.includes('%') || (start >= 0 && (SECRET_NAME.test(url.slice(start)) || url.includes('+', start)));

/** `text` with percent-escapes decoded, again while that changes it (a key may be escaped twice: `pp%255f…`), at
 * most three times. */
function decodedFully(text: string): string {
  let decoded = text;
  for (let round = 0; round < 3; round++) {
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      // One malformed escape: decode the well-formed ones.
      next = decoded.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
        try {
          return decodeURIComponent(run);
        } catch {
          return run;
        }
      });
    }
    if (next === decoded) break;
    decoded = next;
  }
  return decoded;
}

/** The values of secret-named query parameters and every API key replaced. */
function redacted(url: string): string {
  const start = url.indexOf('?');
  let out = url;
  if (start >= 0) {
    const pairs = url
      .slice(start + 1)
      .split('&')
      .map((pair) => {
        const split = pair.indexOf('=');
        const name = split < 0 ? pair : pair.slice(0, split);
        return split >= 0 && SECRET_NAME.test(decodedName(name)) ? `${name}=${REDACTED}` : pair;
      });
    out = `${url.slice(0, start)}?${pairs.join('&')}`;
  }
  return out.replace(KEY, `pp_${REDACTED}`);
}

/**
 * `url` as it may be logged: the values of secret-named query parameters and every API key replaced. A key spelled
 * with percent-escapes (`%70p_…`, `pp%255f…`) shows only once decoded: then the URL is logged decoded, and redacted.
 */
export function redactUrl(url: string): string {
  // Most URLs hold nothing of the kind, told at a glance (8.7 µs of a GET at LOG_LEVEL=info: docs/performance.md).
  if (!mayHoldSecret(url, url.indexOf('?'))) return url;
  const out = redacted(url);
  if (!url.includes('%')) return out;
  const decoded = decodedFully(out);
  return decoded !== out && new RegExp(KEY.source, 'i').test(decoded) ? redacted(decoded) : out;
}

/** The request as Fastify's own lines log it (its errors), with its URL redacted. */
const requestForLog = (request: FastifyRequest) => ({
  method: request.method,
  url: redactUrl(request.url),
  host: request.host,
  remoteAddress: request.ip,
  remotePort: request.socket?.remotePort,
});

/** Logger options (not an instance) as the app takes them: the given ones, with the serializer that redacts URLs. */
export function redactingLogger(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const options = logger === true ? {} : logger;
  return { ...options, serializers: { ...options.serializers, req: requestForLog as never } };
}

/** Whether `log` writes lines at `level` (Fastify's logger of no logging has no levels: it writes none). */
const enabled = (log: FastifyBaseLogger, level: string): boolean => (log as Partial<Logger>).isLevelEnabled?.(level) ?? false;

/** The route a request matched, as its template (`/v1/templates/:templateId`), never its URL; `(unmatched)` for none. */
export const routeOf = (request: FastifyRequest): string => request.routeOptions.url ?? '(unmatched)';

/**
 * Fastify's request lines, ours: each request is one line at `info` once answered — method, redacted URL, route,
 * status, duration, the client's address, and (once authenticated, through the request's child logger) the account
 * and the key's id — and, at `debug`, one on arrival.
 */
export class RequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (enabled(request.log, 'debug')) request.log.debug({ method: request.method, url: redactUrl(request.url) }, 'request received');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // The line is made only when it is written: at LOG_LEVEL=warn, a request that succeeds costs no line at all.
    if (!enabled(request.log, error ? 'error' : 'info')) return;
    const line = {
      method: request.method,
      url: redactUrl(request.url),
      route: routeOf(request),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
      remoteAddress: request.ip,
    };
    if (error) request.log.error({ ...line, err: error }, 'request');
    else request.log.info(line, 'request');
  }
}

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * A request's logger: what it binds (the request's id, then its account and key id) is kept as an object and merged
 * into a line only when one is written. pino's child() would serialize the bindings of every request, logged or not:
 * two children a request were a tenth of a GET's CPU (docs/performance.md).
 */
class RequestLogger {
  private readonly parent: Logger;
  private readonly bound: Record<string, unknown>;

  constructor(parent: Logger, bound: Record<string, unknown>) {
    this.parent = parent;
    this.bound = bound;
  }

  get level(): string {
    return this.parent.level;
  }

  isLevelEnabled(level: string): boolean {
    return this.parent.isLevelEnabled(level);
  }

  child(bindings: Record<string, unknown>): RequestLogger {
    return new RequestLogger(this.parent, { ...this.bound, ...bindings });
  }

  // Methods of the class, not closures made for each request's logger.
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  silent(): void {}

  private write(level: Level, [first, ...rest]: unknown[]): void {
    if (!this.parent.isLevelEnabled(level)) return;
    const log = this.parent[level] as (...args: unknown[]) => void;
    if (first instanceof Error) log.call(this.parent, { ...this.bound, err: first }, ...rest);
    else if (typeof first === 'object' && first !== null) log.call(this.parent, { ...this.bound, ...first }, ...rest);
    else log.call(this.parent, this.bound, first, ...rest);
  }
}

/**
 * Fastify's childLoggerFactory: each request's logger is a RequestLogger over the process's, unless the route asks
 * for a level or serializers of its own (none does), or there is no logger to bind to.
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  const pino = logger as FastifyBaseLogger & Partial<Logger>;
  if (Object.keys(options).length > 0 || typeof pino.isLevelEnabled !== 'function') return logger.child(bindings, options);
  return new RequestLogger(pino as Logger, bindings) as unknown as FastifyBaseLogger;
}
