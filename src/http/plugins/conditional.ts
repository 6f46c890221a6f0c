import { invalid } from '../../domain/errors.ts';
import type { Precondition } from '../../usecases/templates.ts';

// Conditional writes (RFC 9110): a template's ETag names its revision; If-Match makes a write conditional on it.

export const etagOf = (template: { revision: number }): string => `"r${template.revision}"`;

// Optional white space (OWS) is spaces and tabs only.
const ENTITY_TAG = /^[ \t]*(W\/)?"([\x21\x23-\x7e]*)"[ \t]*(?:,|$)/;

/** The condition an If-Match header sets; undefined without one. A malformed header is a 400. */
export function preconditionFrom(header: string | string[] | undefined): Precondition | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (/^[ \t]*\*[ \t]*$/.test(value)) return () => true;
  const revisions = new Set<number>();
  let rest = value;
  while (!/^[ \t]*$/.test(rest)) {
    const match = ENTITY_TAG.exec(rest);
    if (!match) {
      throw invalid('If-Match must be "*" or a list of entity tags such as "r3".', [
        { in: 'header', path: '/if-match', message: 'is not a list of entity tags' },
      ]);
    }
    // Weak tags never match: If-Match compares strongly.
    const revision = /^r([0-9]{1,9})$/.exec(match[2] ?? '')?.[1];
    if (!match[1] && revision) revisions.add(Number(revision));
    rest = rest.slice(match[0].length);
  }
  return (revision) => revisions.has(revision);
}
