import { Type } from '@sinclair/typebox';

// Names of templates, endpoints, registry auths and accounts: the characters they may hold.

/** Control characters (Unicode category Cc: C0, DEL and C1) are refused wherever names or search text go. */
export const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';

/** A user-chosen name: 1 to 255 characters once trimmed, no control characters. */
export const nameSchema = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: NO_CONTROL_CHARACTERS,
    errorMessage: 'must not contain control characters',
    description: `${description} Surrounding white space is trimmed.`,
  });

/** Trims a request body's `name` before it is validated, leaving anything else untouched. */
export function trimName(body: unknown): void {
  if (body && typeof body === 'object' && typeof (body as { name?: unknown }).name === 'string') {
    const input = body as { name: string };
    input.name = input.name.trim();
  }
}
