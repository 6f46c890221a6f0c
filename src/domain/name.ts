import { Type } from '@sinclair/typebox';

/** A user-chosen name: 1 to 255 characters once trimmed, no control characters. */
export const nameSchema = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 255,
    pattern: '^[^\\u0000-\\u001f\\u007f]*$',
    errorMessage: 'must be 1 to 255 characters after trimming, without control characters',
    description: `${description} Surrounding white space is trimmed.`,
  });

/** Trims a request body's `name` before it is validated, leaving anything else untouched. */
export function trimName(body: unknown): void {
  if (body && typeof body === 'object' && typeof (body as { name?: unknown }).name === 'string') {
    const input = body as { name: string };
    input.name = input.name.trim();
  }
}
