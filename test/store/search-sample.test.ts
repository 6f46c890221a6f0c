import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { trigramsOf, WordCharacters } from '../../src/store/templates/search-sample.ts';
import { DIALECTS, freshDatabase } from '../support/harness.ts';

// PostgreSQL's search estimates its trigram index's work from a sample of rows, splitting each into trigrams as
// pg_trgm does: the same trigrams, or the estimate is of another index.

if (DIALECTS.includes('postgres'))
  describe('the trigrams a search sample counts [postgres]', () => {
    test('are the ones pg_trgm indexes for the same text', async () => {
      const database = await freshDatabase('postgres');
      const url = database.url;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('create extension if not exists pg_trgm with schema public');
        const texts = [
          'pytorch notebook\nrunpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04',
          'a',
          'ab-c  d__e',
          'sd 1.5 automatic1111 (fork)',
          'x',
          '',
          '--::..',
          // Digits and letters to JavaScript that are no part of a word to PostgreSQL, and the other way round.
          '²²²² ½ x²',
          'हिन्दी ǅ ﬀ é',
        ];
        const db = new Kysely<never>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url }) }) });
        try {
          const words = new WordCharacters(db as never);
          await words.learn(texts);
          for (const text of texts) {
            const { rows } = await client.query<{ t: string[] }>('select public.show_trgm($1) as t', [text]);
            // pg_trgm keeps a trigram of characters beyond ASCII as a hash: compared by their number.
            assert.equal(trigramsOf(text, false, words.isWord).size, rows[0]?.t.length ?? 0, text);
            if ([...text].every((c) => c.charCodeAt(0) < 0x80))
              assert.deepEqual([...trigramsOf(text, false, words.isWord)].sort(), (rows[0]?.t ?? []).sort(), text);
          }
          assert.equal(trigramsOf('²²²²', true, words.isWord).size, 0, 'a term pg_trgm finds no trigram in');
        } finally {
          await db.destroy();
        }
      } finally {
        await client.end();
        await database.drop();
      }
    });
  });
