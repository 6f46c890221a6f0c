import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { trigramsOf } from '../../src/store/templates/search-sample.ts';
import { DIALECTS, freshDatabase } from '../support/harness.ts';

// PostgreSQL's search estimates its trigram index's work from a sample of rows, splitting each into trigrams as
// pg_trgm does: the same trigrams, or the estimate is of another index.

if (DIALECTS.includes('postgres'))
  describe('the trigrams a search sample counts [postgres]', () => {
    test('are the ones pg_trgm indexes for the same text', async () => {
      const db = await freshDatabase('postgres');
      const client = new pg.Client({ connectionString: db.url });
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
        ];
        for (const text of texts) {
          const { rows } = await client.query<{ t: string[] }>('select public.show_trgm($1) as t', [text]);
          assert.deepEqual([...trigramsOf(text)].sort(), (rows[0]?.t ?? []).sort(), text);
        }
      } finally {
        await client.end();
        await db.drop();
      }
    });
  });
