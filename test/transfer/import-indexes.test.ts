import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { type Database, DIALECTS, freshDatabase, type Harness, startHarness } from '../support/harness.ts';
import { populate } from '../support/install.ts';
import { BIN } from '../support/process.ts';

// An import into PostgreSQL builds the tables' secondary indexes once, after the rows (src/store/bulk-indexes.ts):
// whether it commits or fails, the database is left with every index its migrations made, each as they made it.

const dir = mkdtempSync(join(tmpdir(), 'podplate-import-indexes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function podplate(args: string[], databaseUrl: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { code: r.status, stderr: r.stderr };
}

/** Every index of the database's schema, by name, with its definition (the schema's own name left out). */
async function indexesOf(database: Database): Promise<string[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; definition: string }>(
      `select indexname as name, replace(indexdef, schemaname || '.', '') as definition
       from pg_indexes where schemaname = current_schema() order by indexname`,
    );
    return rows.map((r) => `${r.name}: ${r.definition}`);
  } finally {
    await client.end();
  }
}

describe('an import into PostgreSQL leaves every index the migrations made', {
  skip: DIALECTS.includes('postgres') ? false : 'TEST_DATABASE_URL is not set',
}, () => {
  let source: Harness;
  let file: string;
  let migrated: string[];
  const made: Database[] = [];
  before(async () => {
    source = await startHarness('sqlite');
    await populate(source);
    file = join(dir, 'export.ndjson');
    const r = podplate(['export', '--output', file], source.database.url);
    assert.equal(r.code, 0, r.stderr);
    const fresh = await freshDatabase('postgres');
    made.push(fresh);
    assert.equal(podplate(['migrate'], fresh.url).code, 0);
    migrated = await indexesOf(fresh);
  });
  after(async () => {
    await source?.close();
    for (const database of made) await database.drop();
  });

  test('the migrations made the search and filter indexes (what an import sets aside and builds again)', () => {
    for (const name of ['templates_search_trgm', 'templates_owner_filters', 'templates_public_popular', 'templates_pkey']) {
      assert.ok(
        migrated.some((index) => index.startsWith(`${name}: `)),
        `${name} is among ${migrated.length} indexes`,
      );
    }
  });

  test('after an import that commits', async () => {
    const target = await freshDatabase('postgres');
    made.push(target);
    const r = podplate(['import', '--input', file], target.url);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await indexesOf(target), migrated);
  });

  test('after an import that fails at its last line (everything rolled back)', async () => {
    const target = await freshDatabase('postgres');
    made.push(target);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const broken = join(dir, 'broken.ndjson');
    writeFileSync(broken, [...lines.slice(0, -1), '{"end":true,"rows":1}'].join('\n'));
    const r = podplate(['import', '--input', broken], target.url);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /nothing was imported/);
    assert.deepEqual(await indexesOf(target), migrated);
  });
});
