import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { escapePointer, invalid } from '../../domain/errors.ts';
import { tooWide } from './json-width.ts';
import { bodyTextErrors, invalidUtf8Offset, notUtf8, unacceptableText } from './text.ts';

// Request bodies: JSON, parsed here, each way of being unreadable its own 400.

/**
 * Request bodies are JSON, parsed here so that each way a body can be unreadable gets its own clear 400.
 * Keys that could poison prototypes ("__proto__", "constructor.prototype") are refused rather than dropped, and so is
 * text no request may carry (bytes that are not UTF-8, NUL, lone UTF-16 surrogates: text.ts).
 */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, bytes: Buffer, done) => {
    if (bytes.length === 0) {
      // An operation that takes no body takes an empty one: clients send the header on a DELETE too.
      if (request.routeOptions.schema?.body === undefined) return done(null, undefined);
      return done(invalid('The request body is empty; send a JSON object.', [{ path: '', message: 'must be a JSON object' }]));
    }
    // Refused before it is parsed, or even decoded: building what no request needs would cost more than serving one.
    const wide = tooWide(bytes);
    if (wide) return done(invalid('The request body is wider or deeper than any request needs.', [wide]));
    // Bytes that are not UTF-8 are refused, never read as U+FFFD: what is stored is what was sent.
    const offset = invalidUtf8Offset(bytes);
    if (offset !== undefined) return done(notUtf8(offset));
    // A byte order mark may lead a JSON text (RFC 8259 lets a reader ignore it); it is no part of the value.
    const decoded = bytes.toString('utf8');
    const body = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
    let parsed: unknown;
    try {
      parsed = secureJson.parse(body, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch (error) {
      const poisoned = error instanceof SyntaxError && /forbidden prototype property/.test(error.message);
      if (!poisoned) return done(invalid('The request body is not valid JSON.', [{ path: '', message: 'is not valid JSON' }]));
      // Only read, never merged: JSON.parse makes "__proto__" an own key, which is safe to walk to name its place.
      const path = forbiddenKey(JSON.parse(body)) ?? '';
      return done(
        invalid('The request body uses "__proto__" or "constructor.prototype" as a key, which is not accepted.', [
          { path, message: 'is a key that is not accepted' },
        ]),
      );
    }
    const text = bodyTextErrors(body, parsed);
    done(text.length > 0 ? unacceptableText(text) : null, parsed);
  });
}

/**
 * The JSON Pointer of the first "__proto__" key, or "constructor" key holding "prototype", in `value`. The walk keeps
 * its own stack: a body may nest deeper than the call stack goes.
 */
function forbiddenKey(value: unknown): string | undefined {
  const members = (container: unknown, path: string): [string, unknown, string][] =>
    typeof container === 'object' && container !== null
      ? Object.entries(container)
          .map(([key, inner]): [string, unknown, string] => [key, inner, `${path}/${escapePointer(key)}`])
          .reverse()
      : [];
  const stack = members(value, '');
  while (stack.length > 0) {
    const [key, inner, here] = stack.pop() as [string, unknown, string];
    if (key === '__proto__') return here;
    if (key === 'constructor' && typeof inner === 'object' && inner !== null && Object.hasOwn(inner, 'prototype'))
      return `${here}/prototype`;
    for (const member of members(inner, here)) stack.push(member);
  }
  return undefined;
}
