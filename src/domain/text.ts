// Text any string of a request may hold, as the schemas state it: any Unicode but NUL and UTF-16 surrogates without
// their pair. The HTTP layer refuses such text before the schemas look at a request (http/plugins/text.ts names each
// place); the schemas state the same rule, so that clients and fuzzers generated from the document know it.

/** A lone surrogate, under the "u" flag JSON Schema asks patterns to be read with (a pair is one code point there). */
const UNSTORABLE = '\\u0000\\ud800-\\udfff';
/** Control characters: C0, DEL and C1 (Unicode category Cc). */
export const CONTROL = '\\u0000-\\u001f\\u007f-\\u009f';
/** What String.prototype.trim removes that is not a control character. */
export const SPACE = ' \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/** Free text: anything storable. */
export const STORABLE_TEXT = `^[^${UNSTORABLE}]*$`;
export const STORABLE_TEXT_MESSAGE = 'must not contain NUL or a lone UTF-16 surrogate';

/** Text without control characters (search text, user names). */
export const NO_CONTROL_CHARACTERS = `^[^${CONTROL}\\ud800-\\udfff]*$`;

/** Characters that reorder the text around them (bidirectional marks, embeddings, overrides and isolates). */
export const TEXT_DIRECTION = '\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

/** A label shown beside other text (a key's): no control characters, nothing that reorders what follows it. */
export const PLAIN_LABEL = `^[^${CONTROL}${TEXT_DIRECTION}\\ud800-\\udfff]*$`;

/**
 * A name as a row may hold it: no control characters, and something left once trimmed (the server trims names before
 * it checks them); a write's names follow domain/name.ts's NAME_PATTERN besides. No lookaround and no two ways to
 * match a character, so any validator runs it in one pass (Go's RE2 among them).
 */
export const STORED_NAME_PATTERN = `^[${SPACE}]*[^${SPACE}${CONTROL}\\ud800-\\udfff][^${CONTROL}\\ud800-\\udfff]*$`;
