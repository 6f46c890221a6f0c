import { type Static, Type } from '@sinclair/typebox';
import { CONTENT_FIELDS, sameValue, Template, type TemplateContent } from './template.ts';

// A template's revisions: the diff between two, and how many a template keeps.

/** One field that changed between two revisions. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

/** The fields whose value differs from `before` to `after`, in the order of the Template's fields. */
export function diffContent(before: TemplateContent, after: TemplateContent): FieldChange[] {
  return CONTENT_FIELDS.filter((field) => !sameValue(before[field], after[field])).map((field) => ({
    field,
    from: before[field],
    to: after[field],
  }));
}

/** A revision as stored: the template's content at that revision, and what changed from the one before. */
export interface RevisionRecord {
  templateId: string;
  revision: number;
  snapshot: TemplateContent;
  diff: FieldChange[];
  keyId: string;
  /** The account name of the key that made it, where a read joined it. */
  author?: string;
  /** That key's label ('' when it has none), where a read joined it. */
  keyLabel?: string;
  createdAt: string;
  /** The digest its image was pinned to: found by its check, or carried from the revision it was made from. */
  imageDigest: string | null;
}

/**
 * How much history is kept: a template's newest `revisionsKept` revisions, an endpoint's newest `releasesKept`
 * releases (a release unfinished or not yet announced is kept whatever its age). 0 keeps everything.
 */
export interface HistoryBounds {
  revisionsKept: number;
  releasesKept: number;
}

export const KEEP_ALL: HistoryBounds = { revisionsKept: 0, releasesKept: 0 };

/** The newest revision a change to revision `latest` prunes up to (none while fewer than `kept` exist). */
export const prunedUpTo = (latest: number, kept: number): number => (kept > 0 ? latest - kept : 0);

/** The content of a template: every field its owner chose. */
export const contentOf = (t: TemplateContent): TemplateContent =>
  Object.fromEntries(CONTENT_FIELDS.map((field) => [field, t[field]])) as TemplateContent;

const anyJson = Type.Unsafe<unknown>({ description: 'A value of the field.' });

/** A diff whose `from` values were another template's, once that template is deleted: which fields changed, and to what. */
export const forgettingFrom = (diff: FieldChange[]): FieldChange[] => diff.map(({ field, to }) => ({ field, from: null, to }));

export const FieldChangeSchema = Type.Object(
  {
    field: Type.String({ description: 'The name of the field.' }),
    from: anyJson,
    to: anyJson,
  },
  { $id: 'FieldChange', title: 'FieldChange', additionalProperties: false },
);

export const Revision = Type.Object(
  {
    revision: Type.Integer({ minimum: 1, description: 'The revision number: 1 at creation, one more for each change.' }),
    createdAt: Type.String({ format: 'date-time', description: 'When the revision was made.' }),
    keyId: Type.String({ description: 'The API key that made it.' }),
    author: Type.String({ description: 'The name of the account whose key made it.' }),
    keyLabel: Type.String({ description: 'The label of the key that made it; empty when the key has none.' }),
    diff: Type.Array(Type.Ref(FieldChangeSchema), { description: 'The fields changed from the revision before; empty for revision 1.' }),
    template: Type.Pick(Template, CONTENT_FIELDS, { description: 'The template content at this revision.' }),
    imageDigest: Type.Union([Type.String(), Type.Null()], {
      description: "The digest this revision's image is pinned to (a rollback to it rolls out this digest); null until a check finds one.",
    }),
  },
  { $id: 'Revision', title: 'Revision', additionalProperties: false },
);
export type Revision = Static<typeof Revision>;

export const RollbackInput = Type.Object(
  {
    revision: Type.Integer({
      minimum: 1,
      maximum: 2 ** 31 - 1,
      description: 'The revision whose content becomes the template content again.',
    }),
  },
  { $id: 'RollbackInput', title: 'RollbackInput', additionalProperties: false },
);
export type RollbackInput = Static<typeof RollbackInput>;
