import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notModified } from './conditional.ts';
import { problem, sendProblem } from './problem.ts';

// The web UI: the files Vite built into ui/dist, read once at start and served at / and /assets/*, outside the
// authenticated /v1 scope (the UI itself calls /v1 with the key the user pasted). Without a build, / says how to make one.

export const UI_DIST = fileURLToPath(new URL('../../../ui/dist/', import.meta.url));

/** No inline script or style, no framing, no plugins: a readme that slips past the sanitizer still can't run. */
export const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

interface UiFile {
  body: Buffer;
  type: string;
  etag: string;
}

function readTree(dir: string): Map<string, UiFile> {
  const files = new Map<string, UiFile>();
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const body = readFileSync(path);
        const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
        files.set(relative(dir, path).split(sep).join('/'), { body, type: TYPES[extname(name)] ?? 'application/octet-stream', etag });
      }
    }
  };
  walk(dir);
  return files;
}

const securityHeaders = (reply: FastifyReply) =>
  reply
    .header('content-security-policy', UI_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY');

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Podplate: web UI not built</title></head>
<body><h1>The web UI is not built</h1>
<p>Run <code>npm run build:ui</code> (or <code>npm install</code>, which runs it) and restart the server.
The API under <a href="/docs">/v1</a> works without it.</p></body></html>
`;

/** Registers / and /assets/* from `dir` (ui/dist by default). A missing build gives a 503 page at /, never a crash. */
export function registerUi(app: FastifyInstance, dir: string = UI_DIST): void {
  const files = existsSync(join(dir, 'index.html')) ? readTree(dir) : undefined;
  const send = (reply: FastifyReply, file: UiFile, request: FastifyRequest, cache: string) => {
    securityHeaders(reply).header('cache-control', cache).header('etag', file.etag);
    if (notModified(request.headers, file.etag)) return reply.code(304).send();
    return reply.type(file.type).send(file.body);
  };
  const hide = { schema: { hide: true } };

  app.get('/', hide, async (request, reply) => {
    const index = files?.get('index.html');
    if (!index)
      return securityHeaders(reply).code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
    // index.html names the hashed assets of this build: always revalidated, so a new build is picked up at once.
    return send(reply, index, request, 'no-cache');
  });

  app.get<{ Params: { '*': string } }>('/assets/*', hide, async (request, reply) => {
    const file = files?.get(`assets/${request.params['*']}`);
    if (!file) {
      return sendProblem(securityHeaders(reply), problem('not-found', `There is no UI asset ${request.url.split('?')[0]}.`));
    }
    // Asset names carry a hash of their content: cached for a year, never revalidated.
    return send(reply, file, request, 'public, max-age=31536000, immutable');
  });
}
