import { Type } from '@sinclair/typebox';
import { CONTROL, NO_CONTROL_CHARACTERS, SPACE, STORED_NAME_PATTERN } from './text.ts';

// Names of templates, endpoints, registry auths and accounts: the characters they may hold, and how two are compared.
// Names that look alike are one name: compared after Unicode NFC normalisation and case folding, with the joiners and
// variation selectors that only shape an emoji left out; characters that hide or reorder text (bidirectional
// controls, zero-width spaces and other invisible characters) are refused, and so is a Latin letter written next to a
// Greek or Cyrillic one, or a Greek next to a Cyrillic one (a Cyrillic "а" in "pаypal": UTS #39's mixed-script rule,
// within a word). Search folds text the same way.

/** Control characters (Unicode category Cc: C0, DEL and C1) are refused wherever names or search text go. */
export { NO_CONTROL_CHARACTERS };

/** Characters that reorder text (bidirectional controls) or show as nothing: refused in a name. */
const HIDDEN =
  '\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b\\u200e\\u200f\\u202a-\\u202e' +
  '\\u2060-\\u2064\\u2066-\\u206f\\u3164\\ufeff\\ufff0-\\ufff8';
/** Invisible characters that only shape what is beside them (joiners, variation selectors): kept, but not compared. */
const SHAPING = '\\u200c\\u200d\\ufe00-\\ufe0f';
/** White space a name may begin or end with (the server trims it): String.prototype.trim's, but the BOM, which is hidden. */
const BLANK = SPACE.replace('\\ufeff', '');

// Letters by script, as ranges.
const LATIN = 'A-Za-z\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u024f\\u1e00-\\u1eff';
const GREEK = '\\u0370-\\u03ff\\u1f00-\\u1fff';
const CYRILLIC = '\\u0400-\\u052f';

// The pattern's alphabet: what is refused anywhere; what is neither refused nor such a letter (X), and of that what
// shows as nothing (XS) or something (XV); and a run of letters of one of the three scripts.
const REFUSED = `${CONTROL}\\ud800-\\udfff${HIDDEN}`;
const X = `[^${REFUSED}${LATIN}${GREEK}${CYRILLIC}]`;
const XS = `[${BLANK}${SHAPING}]`;
const XV = `[^${REFUSED}${LATIN}${GREEK}${CYRILLIC}${BLANK}${SHAPING}]`;
const RUN = `(?:[${LATIN}]+|[${GREEK}]+|[${CYRILLIC}]+)`;

/**
 * A name a write may give: no control, hidden or lone-surrogate character; a visible one; no letter of Latin, Greek or
 * Cyrillic next to a letter of another of them. Written as runs of one script's letters kept apart by other
 * characters: no lookaround, and no two ways to match a character (one pass in any validator, Go's RE2 among them).
 * What the OpenAPI document publishes and what decides; `nameProblem` says why (read with the `u` flag).
 */
export const NAME_PATTERN = `^${XS}*(?:${XV}${X}*(?:${RUN}${X}+)*${RUN}?|${RUN}(?:${X}+${RUN})*${X}*)$`;

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udfff]/u;
const HIDDEN_CHARACTER = new RegExp(`[${HIDDEN}]`);
const VISIBLE = new RegExp(`[^${BLANK}${SHAPING}]`);
const MIXED = new RegExp(
  [
    [LATIN, GREEK],
    [LATIN, CYRILLIC],
    [GREEK, CYRILLIC],
  ]
    .flatMap(([a, b]) => [`[${a}][${b}]`, `[${b}][${a}]`])
    .join('|'),
);
/** Shaping characters, and the tag characters that spell a subdivision's flag: not compared. */
const SHAPING_CHARACTERS = new RegExp(`[${SHAPING}\\u{e0000}-\\u{e007f}\\u{e0100}-\\u{e01ef}]`, 'gu');

const codePoint = (c: string) => `U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `name` can't be given to a template, endpoint or registry auth, or undefined when it can (as NAME_PATTERN). */
export function nameProblem(name: string): string | undefined {
  const control = CONTROL_CHARACTER.exec(name)?.[0];
  if (control !== undefined) return `must not contain control characters (${codePoint(control)})`;
  if (LONE_SURROGATE.test(name)) return 'must not contain a lone UTF-16 surrogate';
  const hidden = HIDDEN_CHARACTER.exec(name)?.[0];
  if (hidden !== undefined) return `must not contain invisible or text-reordering characters (${codePoint(hidden)})`;
  if (!VISIBLE.test(name)) return 'must contain a visible character';
  const mixed = MIXED.exec(name)?.[0];
  if (mixed !== undefined) return `must not write Latin, Greek and Cyrillic letters next to each other ("${mixed}")`;
  return undefined;
}

/**
 * Text as names and searches compare it: NFC, lowercased (the dotted capital I's dot and the final sigma folded as
 * the other letters), without the shaping characters. "İstanbul" is "istanbul"; "café" composed or not is one.
 */
export function fold(text: string): string {
  return text
    .normalize('NFC')
    .toLowerCase()
    .replace(/i\u0307/gu, 'i')
    .replaceAll('ς', 'σ')
    .replace(SHAPING_CHARACTERS, '')
    .normalize('NFC');
}

const NAME_MAX_LENGTH = 255;

/** A name as a row holds it and a read shows it: 1 to 255 characters, no control characters, not blank. */
export const nameSchema = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: NAME_MAX_LENGTH,
    pattern: STORED_NAME_PATTERN,
    errorMessage: 'must not contain control characters, nor be only white space',
    description: `${description} Surrounding white space is trimmed.`,
  });

/** A name as a write gives it: besides the bounds of `nameSchema`, the rule of NAME_PATTERN. */
export const newNameSchema = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: NAME_MAX_LENGTH,
    pattern: NAME_PATTERN,
    description:
      `${description} Surrounding white space is trimmed. Names are compared after Unicode NFC normalisation and ` +
      'case folding (so "Café" and "café" are one name). No control, invisible or text-reordering character; at least ' +
      'one visible one; no Latin, Greek or Cyrillic letter next to a letter of another of these scripts.',
  });

/** Trims a request body's `name` before it is validated, leaving anything else untouched. */
export function trimName(body: unknown): void {
  if (body && typeof body === 'object' && typeof (body as { name?: unknown }).name === 'string') {
    const input = body as { name: string };
    input.name = input.name.trim();
  }
}
