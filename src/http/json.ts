import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { invalid } from '../domain/errors.ts';

/**
 * Request bodies are JSON, parsed here so that each way a body can be unreadable gets its own clear 400.
 * Keys that could poison prototypes ("__proto__", "constructor.prototype") are refused rather than dropped.
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '')
      return done(invalid('The request body is empty; send a JSON object.', [{ path: '', message: 'must be a JSON object' }]));
    try {
      done(null, secureJson.parse(body as string, undefined, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      const poisoned = error instanceof SyntaxError && /forbidden prototype property/.test(error.message);
      done(
        poisoned
          ? invalid('The request body uses "__proto__" or "constructor.prototype" as a key, which is not accepted.', [
              { path: '', message: 'must not use "__proto__" or "constructor.prototype" as a key' },
            ])
          : invalid('The request body is not valid JSON.', [{ path: '', message: 'is not valid JSON' }]),
      );
    }
  });
}
