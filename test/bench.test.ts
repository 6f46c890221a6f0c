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
    const r = spawnSync(process.execPath, ['bench/run.ts', '--smoke'], {
      cwd: root,
      env: { ...process.env, BENCH_OUTPUT: output },
      encoding: 'utf8',
      timeout: 300_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /\| scenario \| database \|/);
    const report = JSON.parse(readFileSync(output, 'utf8'));
    const names = report.rows.map(
      (row: { name: string; dialect: string; templates: number }) => `${row.name} ${row.dialect} ${row.templates}`,
    );
    const expected = [
      'ceiling: bare Fastify, constant Template - 0',
      'GET /v1/templates/{id} sqlite 1000',
      'GET /v1/templates (page of 100) sqlite 1000',
      'GET /v1/templates (page of 20) sqlite 1000',
      'compressed: GET /v1/templates (page of 100), gzip sqlite 1000',
      'compressed: GET /v1/templates (page of 100), br sqlite 1000',
      'POST /v1/templates (2 tenants) sqlite 1000',
      'POST /v1/templates/{id}/update (2 tenants) sqlite 1000',
      'POST /v1/templates, one account sqlite 1000',
      'POST junk body (1 MiB, 100,000 unknown keys): 400 sqlite 1000',
      'GET /v1/templates?limit=1000 of ~1 MB templates, 4 at once sqlite 4',
      'GET /v1/templates/{id} of another tenant meanwhile sqlite 4',
      'GET /v1/templates/{id}, LOG_LEVEL=info and the rate limit on sqlite 1000',
      'GET /v1/templates/{id} sqlite 2000',
      'GET /v1/templates (page of 100) sqlite 2000',
      /^GET \/v1\/templates\/\{id\} over \d+ ids sqlite 2000$/,
      // The catalogue's terms: the common one fills a page, the rare one is in exactly 10 public templates, the
      // no-match terms in none.
      'search "pytorch" (common; 100 on page 1), 1 client sqlite 2000',
      'search "quokkaflux" (rare; 10 on page 1), 1 client sqlite 2000',
      'search "xylophone" (no match; 0 on page 1), 1 client sqlite 2000',
      'search "pytorch:2.1.0-py3.11" (no match, of frequent words; 0 on page 1), 1 client sqlite 2000',
      /^search "sd" \(2 characters; [1-9]\d* on page 1\), 1 client sqlite 2000$/,
      'search "qj" (2 characters, no match; 0 on page 1), 1 client sqlite 2000',
      'search "quokkaflux", 10 clients, while 50 connections GET by id sqlite 2000',
      'GET /v1/templates/{id}, 50 connections, while 10 clients search sqlite 2000',
      'sparse filter (scope=public&category=AMD&isServerless=true), page 1, 1 client sqlite 2000',
      /^sparse filter \(scope=public&category=AMD&isServerless=true\), page \d+( \(the last\))?, 1 client sqlite 2000$/,
    ];
    assert.equal(names.length, expected.length, names.join('\n'));
    for (const [i, name] of names.entries()) {
      const want = expected[i] as string | RegExp;
      if (typeof want === 'string') assert.equal(name, want);
      else assert.match(name, want);
    }
    for (const row of report.rows) {
      // The abuse scenarios (junk, large pages and the tenant reading meanwhile) and the searches have no ceiling to
      // compare with.
      const apart = /junk|at once|meanwhile|search|sparse/.test(row.name);
      if (!row.name.includes('meanwhile')) assert.ok(row.rps > 0, `${row.name} served requests`);
      else assert.ok(row.p99 > 0, `${row.name} was timed`);
      assert.equal(row.errors, 0, `${row.name} without errors`);
      if (!apart) assert.equal(typeof row.ratio, 'number');
      // The server's own CPU per request, measured beside every load wrk ran (the searches' one client included).
      if (!/junk|at once|meanwhile|sparse|clients/.test(row.name)) assert.ok(row.cpuUs > 0, `${row.name}: CPU per request`);
      if (!apart) assert.equal(typeof row.cpuRatio, 'number');
    }
    // Fairness between tenants: another's small writes under a heavy tenant's, and its webhook behind a backlog.
    assert.deepEqual(
      report.fairness.map((f: { dialect: string }) => f.dialect),
      ['sqlite'],
    );
    assert.ok(report.fairness[0].writes.p50 > 0 && report.fairness[0].delivery.behindMs > 0);
    // Webhook delivery, with an empty outbox and with 2,000 delivered events in it (smoke's size).
    assert.deepEqual(
      report.deliveries.map((d: { dialect: string; events: number }) => `${d.dialect} ${d.events}`),
      ['sqlite 100', 'sqlite 100'],
    );
    assert.equal(report.deliveries[0].delivered, 0);
    assert.ok(report.deliveries[1].delivered >= 2_000);
    for (const d of report.deliveries) assert.ok(d.rate > 0, 'events were delivered');
    assert.ok(report.peakRssMb.sqlite > 0);
    assert.deepEqual(
      report.transfers.map(
        (t: { name: string; dialect: string; templates: number; rows: number }) => `${t.name} ${t.dialect} ${t.templates} ${t.rows}`,
      ),
      // 2,000 templates of the catalogue and their revisions, 123 accounts (120 owners, 2 official, the mover), 1 key.
      ['export sqlite 2000 4124', 'import sqlite 2000 4124'],
    );
    for (const t of report.transfers) assert.ok(t.templatesPerSecond > 0 && t.peakRssMb > 0, `${t.name} reported its rate and memory`);
    const targets = report.targets.map((t: { target: string }) => t.target);
    for (const target of [
      'export sqlite >= 20,000 templates/s',
      'search "quokkaflux" p99 <= 50 ms, 1 client, 2,000 (sqlite)',
      'GET by id p99 <= 20 ms while 10 clients search (sqlite)',
      'no 5xx: GET by id and searches meanwhile (sqlite)',
      'sparse filter: page ',
      'outbox delivery with ',
      'GET by id, SQLite: CPU per request <= 1.43 x',
      "another tenant's small writes under",
      "another tenant's webhook behind 90 large releases",
    ])
      assert.ok(
        targets.some((t: string) => t.startsWith(target)),
        target,
      );
    assert.ok(report.targets.length >= 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a load of 50,000 paths requests each of them (a wrk script LuaJIT could not load made wrk request / instead)', async () => {
  const { createServer } = await import('node:http');
  const { load } = await import('../bench/load.ts');
  const asked = new Set<string>();
  const server = createServer((request, response) => {
    asked.add(request.url ?? '');
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const paths = Array.from({ length: 50_000 }, (_, i) => `/v1/templates/t${i}`);
    await load('wide', { url, pid: process.pid }, [{ path: '/v1/templates', paths }], 'pp_test', { seconds: 1, warmup: 1 });
    assert.ok(!asked.has('/'), 'never the fallback');
    assert.ok(asked.size > 10_000, `${asked.size} distinct paths asked`);
    assert.ok([...asked].every((p) => p.startsWith('/v1/templates/t')));
  } finally {
    server.close();
  }
});
