import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { forEachDialect, startHarness, templateBody } from '../support/harness.ts';
import { BIN } from '../support/process.ts';

// An export taken while the service writes is one consistent state: each template with exactly the revisions its
// row counts, although templates are read long before their revisions.

forEachDialect('podplate export while the service writes', (dialect) => {
  test('every template in the export has exactly the revisions it counts, and nothing else has any', async () => {
    const h = await startHarness(dialect);
    const dir = mkdtempSync(join(tmpdir(), 'podplate-snapshot-'));
    try {
      const key = await h.key('writer');
      const ids: string[] = [];
      // Long readmes make a long export: the writes below have time to land between its reads.
      const readme = 'a long readme '.repeat(6000);
      for (let i = 0; i < 200; i++) ids.push((await h.call('POST', '/v1/templates', { key, body: templateBody({ readme }) })).body.id);

      let writing = true;
      let writesDuringExport = 0;
      const writers = Array.from({ length: 4 }, async (_, w) => {
        for (let n = 0; writing; n++) {
          const r =
            n % 3 === 0
              ? await h.call('POST', '/v1/templates', { key, body: templateBody() })
              : await h.call('POST', `/v1/templates/${ids[(n * 7 + w) % ids.length]}/update`, { key, body: { readme: `w${w} n${n}` } });
          assert.equal(r.status, 200, r.text);
          writesDuringExport++;
        }
      });
      const file = join(dir, 'export.ndjson');
      const exported = spawn(process.execPath, [BIN, 'export', '--output', file], {
        env: { ...process.env, DATABASE_URL: h.database.url },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      exported.stderr.on('data', (d) => {
        stderr += d;
      });
      const code = await new Promise((resolve) => exported.once('exit', resolve));
      writing = false;
      await Promise.all(writers);
      assert.equal(code, 0, stderr);
      assert.ok(writesDuringExport > 10, `the service wrote while the export ran (${writesDuringExport} writes)`);

      let table = '';
      const revisionOf = new Map<string, number>();
      const revisions = new Map<string, number[]>();
      for (const line of readFileSync(file, 'utf8').trimEnd().split('\n')) {
        const value = JSON.parse(line);
        if (!Array.isArray(value)) {
          table = value.table ?? '';
          continue;
        }
        if (table === 'templates') revisionOf.set(value[1], value[21]);
        if (table === 'template_revisions') revisions.set(value[0], [...(revisions.get(value[0]) ?? []), value[1]]);
      }
      assert.ok(revisionOf.size >= 200);
      for (const [id, revision] of revisionOf) {
        assert.deepEqual(
          (revisions.get(id) ?? []).sort((a, b) => a - b),
          Array.from({ length: revision }, (_, i) => i + 1),
          `template ${id} at revision ${revision}`,
        );
      }
      for (const id of revisions.keys()) assert.ok(revisionOf.has(id), `revisions of ${id}, a template not in the export`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await h.close();
    }
  });
});
