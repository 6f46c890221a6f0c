import { isUtf8 } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import { type DomainError, escapePointer, type FieldError, invalid } from '../../domain/errors.ts';
import { MAX_FIELD_ERRORS } from './validation.ts';

// Text a request may carry: UTF-8 bytes only (a body that is not is refused whole, never decoded with U+FFFD in
// place of what it could not read); any Unicode, but no NUL (PostgreSQL can't hold it in text) and no UTF-16 surrogate
// without its pair (it has no UTF-8 form, so either database would keep U+FFFD in its place and the stored value
// would silently differ from the one accepted). Checked before the schemas look at a request: a JSON body as it is
// parsed (json.ts), in one walk over every string and member name; the query and the path in a preValidation hook,
// where a query string must also be valid percent-encoded UTF-8.

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what is refused
const SUSPECT = /[\u0000\ud800-\udfff]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what is refused
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` can't be accepted, or undefined when it can. */
export function textProblem(text: string): string | undefined {
  // Most text holds neither NUL nor any surrogate: one cheap test, and the exact one only when it does.
  if (!SUSPECT.test(text)) return undefined;
  const found = UNSTORABLE.exec(text)?.[0];
  if (found === undefined) return undefined;
  return found === '\u0000' ? 'must not contain the NUL character (\\u0000)' : 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)';
}

/**
 * Every string and member name in `value` (a parsed body, query or path) that can't be accepted, as field errors
 * with JSON Pointers from its root, in document order; at most `limit`. The walk keeps its own stack (a body may
 * nest deeper than the call stack goes), and builds a pointer only for a container it descends into or a place it
 * names: a flat body of 100,000 members costs one test per string.
 */
export function textErrors(value: unknown, part: FieldError['in'], limit = MAX_FIELD_ERRORS): FieldError[] {
  const errors: FieldError[] = [];
  const named = (path: string, problem: string) => errors.push({ in: part, path, message: problem });
  if (typeof value === 'string') {
    const problem = textProblem(value);
    if (problem) named('', problem);
    return errors;
  }
  const containers: [unknown, string][] = [[value, '']];
  while (containers.length > 0 && errors.length < limit) {
    const [current, path] = containers.pop() as [unknown, string];
    if (typeof current !== 'object' || current === null) continue;
    const children: [unknown, string][] = [];
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const item: unknown = current[i];
        if (typeof item === 'string') {
          if (SUSPECT.test(item)) {
            const problem = textProblem(item);
            if (problem) named(`${path}/${i}`, problem);
          }
        } else if (typeof item === 'object' && item !== null) children.push([item, `${path}/${i}`]);
      }
    } else {
      const members = current as Record<string, unknown>;
      for (const key in members) {
        const item = members[key];
        if (SUSPECT.test(key)) {
          const problem = textProblem(key);
          if (problem) {
            named(`${path}/${escapePointer(key)}`, `is a name that ${problem}`);
            continue;
          }
        }
        if (typeof item === 'string') {
          if (SUSPECT.test(item)) {
            const problem = textProblem(item);
            if (problem) named(`${path}/${escapePointer(key)}`, problem);
          }
        } else if (typeof item === 'object' && item !== null) children.push([item, `${path}/${escapePointer(key)}`]);
      }
    }
    for (let i = children.length - 1; i >= 0; i--) containers.push(children[i] as [unknown, string]);
  }
  return errors.slice(0, limit);
}

/**
 * The query parameters whose name or value is not valid percent-encoded UTF-8 ("%FF", "%ED%A0%80": a surrogate
 * encoded on its own). The query parser keeps such text as it was sent; here it is refused, named as it was sent.
 */
export function queryEncodingErrors(url: string): FieldError[] {
  const start = url.indexOf('?');
  if (start < 0 || !url.includes('%', start)) return [];
  const errors: FieldError[] = [];
  for (const pair of url.slice(start + 1).split('&')) {
    if (!pair.includes('%')) continue;
    const split = pair.indexOf('=');
    const [name, value] = split < 0 ? [pair, ''] : [pair.slice(0, split), pair.slice(split + 1)];
    const decodedName = decode(name);
    const path = `/${escapePointer(decodedName ?? name)}`;
    if (decodedName === undefined) errors.push({ in: 'query', path, message: 'is a name that is not valid percent-encoded UTF-8' });
    else if (decode(value) === undefined) errors.push({ in: 'query', path, message: 'is not valid percent-encoded UTF-8' });
    if (errors.length >= MAX_FIELD_ERRORS) break;
  }
  return errors;
}

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/**
 * Where `bytes` first stop being UTF-8 (RFC 3629: no overlong form, no surrogate, nothing past U+10FFFF, no sequence
 * cut short): the offset of the byte that begins the sequence at fault, counting from 0; undefined when all are.
 * Node's `isUtf8` answers the common case in one fast pass; the offset is looked for only in bytes known to be bad.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number | undefined {
  if (isUtf8(bytes)) return undefined;
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] as number;
    if (lead < 0x80) {
      i++;
      continue;
    }
    // The length of the sequence and the range its second byte must lie in (which rules out overlong forms,
    // surrogates and code points past U+10FFFF).
    const [length, low, high] =
      lead >= 0xc2 && lead <= 0xdf
        ? [2, 0x80, 0xbf]
        : lead === 0xe0
          ? [3, 0xa0, 0xbf]
          : lead === 0xed
            ? [3, 0x80, 0x9f]
            : lead >= 0xe1 && lead <= 0xef
              ? [3, 0x80, 0xbf]
              : lead === 0xf0
                ? [4, 0x90, 0xbf]
                : lead >= 0xf1 && lead <= 0xf3
                  ? [4, 0x80, 0xbf]
                  : lead === 0xf4
                    ? [4, 0x80, 0x8f]
                    : [0, 0, 0];
    if (length === 0) return i;
    const second = bytes[i + 1];
    if (second === undefined || second < low || second > high) return i;
    for (let k = 2; k < length; k++) {
      const next = bytes[i + k];
      if (next === undefined || next < 0x80 || next > 0xbf) return i;
    }
    i += length;
  }
  return undefined;
}

/** A body that is not UTF-8, as the 400 that says where (its bytes are never repeated). */
export function notUtf8(offset: number): DomainError {
  return invalid(`The request body is not valid UTF-8: the byte at offset ${offset} (counting from 0) does not begin a character.`, [
    { path: '', message: `is not valid UTF-8 at byte offset ${offset}` },
  ]);
}

/** A request holding unacceptable text, as the 400 that names each place. */
export function unacceptableText(errors: FieldError[]): DomainError {
  const places = errors.map((e) => `${e.in} ${e.path || '(the whole)'}`).join(', ');
  return invalid(`The request holds text that is not accepted (NUL, a lone UTF-16 surrogate or bad percent-encoding): ${places}.`, errors);
}

/**
 * JSON text can hold NUL or a lone surrogate only as an escape (\u0000, \ud800-\udfff): a decoded body has neither raw.
 * So a body whose text has no such escape needs no walk, and most bodies cost one scan of their text.
 */
const ESCAPED = /\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})/;

/** The places in a JSON body, given as text and as parsed, that hold unacceptable text. */
export function bodyTextErrors(json: string, parsed: unknown): FieldError[] {
  return ESCAPED.test(json) ? textErrors(parsed, 'body') : [];
}

/** The preValidation hook that refuses a query or path holding unacceptable text, naming each place once. */
export async function refuseUnacceptableText(request: FastifyRequest): Promise<void> {
  const found = [...queryEncodingErrors(request.url), ...textErrors(request.query, 'query'), ...textErrors(request.params, 'path')];
  if (found.length === 0) return;
  throw unacceptableText([...new Map(found.map((e) => [`${e.in} ${e.path}`, e])).values()].slice(0, MAX_FIELD_ERRORS));
}

/**
 * The path parameters of a URL the router could not take: segments that are not valid percent-encoded UTF-8, or are
 * longer than the router reads. Found by matching the URL again with a stand-in for each such segment.
 */
export function unreadablePathParameters(request: FastifyRequest, maxLength: number): FieldError[] {
  const split = request.url.indexOf('?');
  const [path, query] = split < 0 ? [request.url, ''] : [request.url.slice(0, split), request.url.slice(split)];
  const segments = path.split('/');
  const standIn = (i: number) => `unreadable-segment-${i}`;
  const unreadable = segments.map((s) => s.length > maxLength || decode(s) === undefined);
  const url = segments.map((s, i) => (unreadable[i] ? standIn(i) : s)).join('/') + query;
  const params = (request.server.findRoute({ method: request.method as 'GET', url })?.params ?? {}) as Record<string, string>;
  return Object.entries(params).flatMap(([name, value]) => {
    const i = segments.findIndex((_, j) => unreadable[j] && value === standIn(j));
    if (i < 0) return [];
    const message =
      (segments[i] as string).length > maxLength ? `must be at most ${maxLength} characters` : 'is not valid percent-encoded UTF-8';
    return [{ in: 'path' as const, path: `/${escapePointer(name)}`, message }];
  });
}
