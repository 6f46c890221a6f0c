import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford's base32, lowercase: no i, l, o, u

/** A random identifier: 16 characters, 80 bits. */
export function newId(prefix = ''): string {
  const bytes = randomBytes(10);
  let bits = 0;
  let value = 0;
  let id = prefix;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      id += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return id;
}

export const now = (): string => new Date().toISOString();
