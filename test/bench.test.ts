import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The benchmark harness runs end to end (a second of load per scenario). Its figures are not judged here:
// speed is measured by `npm run bench`, as ratios, never asserted in tests.

test('npm run bench -- --smoke runs every scenario and reports figures and targets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'podplate-bench-smoke-'));
  try {
    const output = join(dir, 'report.json');
    const root = fileURLToPath(new URL('..', import.meta.url));
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--smoke'], {
      cwd: root,
      env: { ...process.env, BENCH_OUTPUT: output },
      encoding: 'utf8',
      timeout: 180_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /\| scenario \| database \|/);
    const report = JSON.parse(readFileSync(output, 'utf8'));
    const names = report.rows.map(
      (row: { name: string; dialect: string; templates: number }) => `${row.name} ${row.dialect} ${row.templates}`,
    );
    assert.deepEqual(names, [
      'ceiling: bare Fastify, constant Template - 0',
      'GET /v1/templates/{id} sqlite 1000',
      'GET /v1/templates (page of 100) sqlite 1000',
      'POST /v1/templates (2 tenants) sqlite 1000',
      'POST /v1/templates/{id}/update (2 tenants) sqlite 1000',
      'POST /v1/templates, one account sqlite 1000',
      'POST junk body (1 MiB, 100,000 unknown keys): 400 sqlite 1000',
      'GET /v1/templates?limit=1000 of ~1 MB templates, 4 at once sqlite 4',
      'GET /v1/templates/{id} of another tenant meanwhile sqlite 4',
      'GET /v1/templates/{id} sqlite 2000',
      'GET /v1/templates (page of 100) sqlite 2000',
      'GET /v1/templates/{id} over 2,000 ids sqlite 2000',
    ]);
    for (const row of report.rows) {
      // The abuse scenarios (junk, large pages and the tenant reading meanwhile) have no ceiling to compare with.
      const abuse = /junk|at once|meanwhile/.test(row.name);
      if (!row.name.includes('meanwhile')) assert.ok(row.rps > 0, `${row.name} served requests`);
      else assert.ok(row.p99 > 0, `${row.name} was timed`);
      assert.equal(row.errors, 0, `${row.name} without errors`);
      if (!abuse) assert.equal(typeof row.ratio, 'number');
    }
    assert.ok(report.peakRssMb.sqlite > 0);
    assert.deepEqual(
      report.transfers.map(
        (t: { name: string; dialect: string; templates: number; rows: number }) => `${t.name} ${t.dialect} ${t.templates} ${t.rows}`,
      ),
      ['export sqlite 2000 4002', 'import sqlite 2000 4002'],
    );
    for (const t of report.transfers) assert.ok(t.templatesPerSecond > 0 && t.peakRssMb > 0, `${t.name} reported its rate and memory`);
    assert.ok(report.targets.some((t: { target: string }) => t.target.startsWith('export sqlite >= 20,000 templates/s')));
    assert.ok(report.targets.length >= 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
