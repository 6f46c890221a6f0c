import { Type } from '@sinclair/typebox';
import { invalid } from '../../domain/errors.ts';
import type { Precondition } from '../../usecases/templates.ts';

// Conditional requests (RFC 9110 §13): a template's ETag names its revision. If-Match makes a write conditional on it;
// If-None-Match lets a read answer 304 when the client's copy is current, and makes a write fail when it is.

/**
 * A template's entity tag: its revision and, once its image was checked, the check's status and time (a check
 * changes `imageCheck`, not the revision): `"r3"`, then `"r3.v1ml2q8gk"` (the status's initial, the time in ms, base
 * 36). A read's If-None-Match compares the whole tag; a write's If-Match and If-None-Match compare the revision, which
 * is what a write can conflict with (a check landing meanwhile fails no write).
 */
export const etagOf = (template: { revision: number; imageCheck?: { status: string; checkedAt: string | null } }): string => {
  const checkedAt = template.imageCheck?.checkedAt;
  if (!checkedAt) return `"r${template.revision}"`;
  return `"r${template.revision}.${template.imageCheck?.status.charAt(0)}${Date.parse(checkedAt).toString(36)}"`;
};

/** The revision an entity tag of ours names; undefined for a tag that is not ours. */
const revisionOf = (opaque: string): number | undefined => {
  const match = /^r([0-9]{1,15})(?:\.[a-z0-9]+)?$/.exec(opaque);
  return match ? Number(match[1]) : undefined;
};

/** An entity tag: optionally weak (`W/`), its opaque part quoted (RFC 9110 §8.8.3). */
const TAG = '(?:W/)?"[\\x21\\x23-\\x7e]*"';
/**
 * What If-Match and If-None-Match may hold: `*`, or entity tags separated by commas, spaces and tabs around them
 * (optional white space is spaces and tabs only); empty list elements are ignored, as RFC 9110 §5.6.1 asks. The
 * schemas publish this pattern and the validator checks it; the parse below reads only headers that match it.
 */
export const ENTITY_TAGS_PATTERN = `^(?:[ \\t]*\\*[ \\t]*|[ \\t,]*(?:${TAG}(?:[ \\t]*,[ \\t,]*${TAG})*[ \\t,]*)?)$`;
/** The longest If-Match or If-None-Match read: some 80 entity tags, more than any client keeps of one template. */
export const ENTITY_TAGS_MAX_LENGTH = 1024;
const ENTITY_TAGS = new RegExp(ENTITY_TAGS_PATTERN);
const EACH_TAG = /(W\/)?"([\x21\x23-\x7e]*)"/g;

const entityTagsHeader = (description: string) =>
  Type.Optional(
    Type.String({
      maxLength: ENTITY_TAGS_MAX_LENGTH,
      pattern: ENTITY_TAGS_PATTERN,
      errorMessage: 'is not a list of entity tags',
      description: `${description} \`*\` or a comma-separated list of entity tags (\`"r3"\`, \`W/"r3"\`), at most ${ENTITY_TAGS_MAX_LENGTH} characters.`,
      examples: ['"r3"'],
    }),
  );

export const ifMatchHeader = entityTagsHeader(
  'Make the write conditional: the ETag of the revision it was based on (412 otherwise). Compared strongly: a weak tag never matches.',
);
export const ifNoneMatchHeader = (read: boolean) =>
  entityTagsHeader(
    read
      ? 'Answer 304, with the ETag and no body, when the template is still as a tag named here says: its revision and image check (compared weakly: `W/"r3"` names revision 3 before any check).'
      : 'Make the write fail (412) when the template is at a revision named here, or exists at all with `*`.',
  );

type Tags = '*' | { weak: boolean; opaque: string }[];

/** The entity tags a header holds; undefined without one. A header that is not a list of entity tags is a 400. */
function entityTags(header: string | string[] | undefined, name: 'if-match' | 'if-none-match'): Tags | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.length > ENTITY_TAGS_MAX_LENGTH || !ENTITY_TAGS.test(value)) {
    const shown = name === 'if-match' ? 'If-Match' : 'If-None-Match';
    throw invalid(`${shown} must be "*" or a list of entity tags such as "r3".`, [
      { in: 'header', path: `/${name}`, message: 'is not a list of entity tags' },
    ]);
  }
  if (/^[ \t]*\*[ \t]*$/.test(value)) return '*';
  return [...value.matchAll(EACH_TAG)].map((m) => ({ weak: m[1] !== undefined, opaque: m[2] as string }));
}

/** Whether `tags` name `etag` (a strong tag of ours): compared strongly (If-Match) or weakly (If-None-Match). */
function names(tags: Tags, etag: string, weakly: boolean): boolean {
  if (tags === '*') return true;
  const opaque = etag.slice(1, -1);
  return tags.some((t) => t.opaque === opaque && (weakly || !t.weak));
}

/** Whether `tags` name a tag of `revision`, whatever its image check: compared strongly or weakly. */
function namesRevision(tags: Tags, revision: number, weakly: boolean): boolean {
  if (tags === '*') return true;
  return tags.some((t) => revisionOf(t.opaque) === revision && (weakly || !t.weak));
}

/**
 * The conditions If-Match and If-None-Match set on a write to a template; undefined without either. In the order of
 * RFC 9110 §13.2.2: a revision If-Match does not name, or one If-None-Match names, fails the write with a 412.
 */
export function preconditionFrom(headers: Record<string, string | string[] | undefined>): Precondition | undefined {
  const ifMatch = entityTags(headers['if-match'], 'if-match');
  const ifNoneMatch = entityTags(headers['if-none-match'], 'if-none-match');
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  return (revision) => {
    if (ifMatch !== undefined && !namesRevision(ifMatch, revision, false)) return 'which If-Match does not name';
    if (ifNoneMatch !== undefined && namesRevision(ifNoneMatch, revision, true)) return 'which If-None-Match names';
    return undefined;
  };
}

/** Whether a read may answer 304: its If-None-Match names `etag`, compared weakly (RFC 9110 §13.1.2). */
export function notModified(headers: Record<string, string | string[] | undefined>, etag: string): boolean {
  const tags = entityTags(headers['if-none-match'], 'if-none-match');
  return tags !== undefined && names(tags, etag, true);
}
