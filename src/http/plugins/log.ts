import type { FastifyRequest, FastifyServerOptions } from 'fastify';

// What the logs may show of a request: never a key. The Authorization header is never logged; a key sent where it
// doesn't belong (`?api_key=pp_…`, a path, a search) would be, inside the URL, so logged URLs are redacted.

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

/** `url` as it may be logged: the values of secret-named query parameters and every API key replaced. */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  let redacted = url;
  if (start >= 0) {
    const pairs = url
      .slice(start + 1)
      .split('&')
      .map((pair) => {
        const split = pair.indexOf('=');
        const name = split < 0 ? pair : pair.slice(0, split);
        return split >= 0 && SECRET_NAME.test(decodedName(name)) ? `${name}=${REDACTED}` : pair;
      });
    redacted = `${url.slice(0, start)}?${pairs.join('&')}`;
  }
  return redacted.replace(KEY, `pp_${REDACTED}`);
}

/** The request as logged (Fastify's own fields), with its URL redacted. */
const requestForLog = (request: FastifyRequest) => ({
  method: request.method,
  url: redactUrl(request.url),
  host: request.host,
  remoteAddress: request.ip,
  remotePort: request.socket?.remotePort,
});

/** The app's logger options: the given ones, with the request serializer that redacts URLs. */
export function redactingLogger(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (!logger) return false;
  const options = logger === true ? {} : logger;
  return { ...options, serializers: { ...options.serializers, req: requestForLog as never } };
}
