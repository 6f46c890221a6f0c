import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DUMP_TABLES, PAGE_BYTES } from '../../src/store/dump/dump.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// An export reads each table a page at a time, and a page is bounded in bytes, not only in rows: its memory follows
// the size of the rows, so 400 large templates take no more than 100 do.

forEachDialect('pages of an export', (dialect) => {
  let h: Harness;
  before(async () => {
    h = await startHarness(dialect);
  });
  after(() => h.close());

  test('pages of large rows hold at most 8 MiB of text each, and every row once, in key order', async () => {
    const key = await h.key('large');
    const env = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`V${i}`, String(i % 10).repeat(30_000)]));
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      const r = await h.call('POST', '/v1/templates', { key, body: templateBody({ name: `large ${i}`, env }) });
      assert.equal(r.status, 200, r.text);
      ids.push(r.body.id);
    }
    const templates = DUMP_TABLES.find((t) => t.name === 'templates');
    assert.ok(templates);
    const seen: string[] = [];
    const sizes = await h.store.snapshot(async (reader) => {
      const pageBytes: number[] = [];
      for await (const page of reader.pages(templates, 2000)) {
        pageBytes.push(
          page.reduce((sum, row) => sum + row.reduce((s: number, v) => s + (typeof v === 'string' ? Buffer.byteLength(v) : 0), 0), 0),
        );
        for (const row of page) seen.push(row[templates.columns.indexOf('id')] as string);
      }
      return pageBytes;
    });
    assert.ok(sizes.length >= 3, `24 templates of about 840 KB of text in ${sizes.length} pages`);
    for (const bytes of sizes) assert.ok(bytes <= PAGE_BYTES + 2_000_000, `a page of ${bytes} bytes`);
    assert.deepEqual(new Set(seen), new Set(ids));
    assert.equal(seen.length, ids.length);
  });
});
