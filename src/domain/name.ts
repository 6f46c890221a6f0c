import { Type } from '@sinclair/typebox';
import { NAME_PATTERN, NO_CONTROL_CHARACTERS } from './text.ts';

// Names of templates, endpoints, registry auths and accounts: the characters they may hold.

/** Control characters (Unicode category Cc: C0, DEL and C1) are refused wherever names or search text go. */
export { NO_CONTROL_CHARACTERS };

/** A user-chosen name: 1 to 255 characters once trimmed, no control characters. */
export const nameSchema = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: NAME_PATTERN,
    errorMessage: 'must not contain control characters, nor be only white space',
    description: `${description} Surrounding white space is trimmed.`,
  });

/** Trims a request body's `name` before it is validated, leaving anything else untouched. */
export function trimName(body: unknown): void {
  if (body && typeof body === 'object' && typeof (body as { name?: unknown }).name === 'string') {
    const input = body as { name: string };
    input.name = input.name.trim();
  }
}
