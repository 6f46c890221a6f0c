import { randomFillSync } from 'node:crypto';

// Ids of templates, endpoints, keys and the rest: a prefix and random Crockford base32.

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford's base32, lowercase: no i, l, o, u

const ID_BYTES = 10;
// Random bytes are drawn 4 KiB at a time, as crypto.randomUUID does: one call per 409 ids instead of one per id
// (a create draws several; the calls were 4 % of its profile).
const pool = Buffer.alloc(ID_BYTES * 409);
let drawn = pool.length;

/** A random identifier: 16 characters, 80 bits. */
export function newId(prefix = ''): string {
  if (drawn === pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  let bits = 0;
  let value = 0;
  let id = prefix;
  for (let i = drawn; i < drawn + ID_BYTES; i++) {
    value = (value << 8) | (pool[i] as number);
    bits += 8;
    while (bits >= 5) {
      id += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  drawn += ID_BYTES;
  return id;
}
