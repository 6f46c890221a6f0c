import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.ts';

test('ids are 16 characters of lowercase Crockford base32 after their prefix, and never repeat across refills of the random pool', () => {
  // 10,000 ids draw the pool of random bytes (409 ids' worth) empty 24 times.
  const ids = Array.from({ length: 10_000 }, (_, i) => newId(i % 2 ? 'key_' : ''));
  for (const [i, id] of ids.entries()) assert.match(id, i % 2 ? /^key_[0-9a-hjkmnp-tv-z]{16}$/ : /^[0-9a-hjkmnp-tv-z]{16}$/);
  assert.equal(new Set(ids.map((id) => id.replace('key_', ''))).size, ids.length);
  // Every character turns up in every position: the bytes are spread over the whole id.
  for (let position = 0; position < 16; position++) {
    assert.equal(new Set(ids.map((id) => id.replace('key_', '')[position])).size, 32, `position ${position}`);
  }
});
