import { escapePointer } from '../../domain/errors.ts';

// How wide and deep a JSON request body may be, checked from its bytes before it is parsed.

/** No object or array in a request body has more members than this (the widest field, `env`, allows 256). */
export const MAX_MEMBERS = 1000;
/** No request body nests deeper than this (the deepest field is two levels down). */
export const MAX_DEPTH = 32;

interface Level {
  array: boolean;
  /** Commas so far: one fewer than its members, and the index of the item being read in an array. */
  commas: number;
  /** Where the key being read, in an object, lies in the body (quotes excluded): decoded only to name a refusal. */
  keyStart: number;
  keyEnd: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Where a JSON body first holds an object or array wider than MAX_MEMBERS or nests deeper than MAX_DEPTH, as a JSON
 * Pointer and a reason; undefined when it holds none. One pass over its bytes as they came (every byte JSON gives a
 * meaning is ASCII, and UTF-8 never uses those bytes inside a longer character), building nothing: not the text,
 * not a key. Building a 1 MiB object of 100,000 keys costs JSON.parse about 30 ms (a streaming parser library,
 * 50-90 ms), this scan a few; and a refused body never becomes a string on V8's heap, where a megabyte of garbage
 * would wait for a full collection. Malformed text is not judged here (JSON.parse does that next): the scan only
 * never fails or loops on it.
 */
export function tooWide(bytes: Buffer): { path: string; message: string } | undefined {
  const levels: Level[] = [];
  /** The JSON Pointer of the level at `depth`. */
  const pathTo = (depth: number) =>
    levels
      .slice(0, depth)
      .map((l) => `/${l.array ? l.commas : keyOf(bytes.toString('utf8', l.keyStart, l.keyEnd))}`)
      .join('');
  let expectingKey = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      const end = closingQuote(bytes, i);
      const top = levels[levels.length - 1];
      if (expectingKey && top && !top.array) {
        top.keyStart = i + 1;
        top.keyEnd = end;
      }
      expectingKey = false;
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      levels.push({ array: c === 0x5b, commas: 0, keyStart: 0, keyEnd: 0 });
      if (levels.length > MAX_DEPTH) return { path: pathTo(levels.length - 1), message: `nests deeper than ${MAX_DEPTH} levels` };
      expectingKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      levels.pop();
      expectingKey = false;
    } else if (c === 0x2c /* , */) {
      const top = levels[levels.length - 1];
      if (!top) continue;
      if (++top.commas >= MAX_MEMBERS) {
        const what = top.array ? 'items' : 'keys';
        return { path: pathTo(levels.length - 1), message: `has more than ${MAX_MEMBERS} ${what}; no request needs that many` };
      }
      expectingKey = !top.array;
    }
  }
  return undefined;
}

/** The index of the quote that ends the string opened at `open`, or the body's end when there is none. */
function closingQuote(bytes: Buffer, open: number): number {
  let at = open;
  for (;;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return bytes.length;
    let backslashes = 0;
    for (let j = at - 1; j > open && bytes[j] === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** A key's JSON string content as a JSON Pointer segment (escapes decoded when they are valid). */
function keyOf(raw: string): string {
  if (!raw.includes('\\')) return escapePointer(raw);
  try {
    return escapePointer(JSON.parse(`"${raw}"`));
  } catch {
    return escapePointer(raw);
  }
}
