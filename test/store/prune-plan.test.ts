import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import { Kysely } from 'kysely';
import pg from 'pg';
import { dialectFor } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { at, templateRecord } from '../support/records.ts';

// Pruning history runs in every update of a template past its bound: it must read down a key, never the table.
// 200 templates of 30 revisions; 40 endpoints of 40 releases, each with its delivered outbox event.

const TEMPLATES = 200;
const REVISIONS = 30;
const ENDPOINTS = 40;
const RELEASES = 40;

forEachDialect('the plans of history pruning', (dialect) => {
  let db: Database;
  let store: Store;
  let templateIds: string[];
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    await store.accounts.ensure({ id: 'acc_a', name: 'acc_a', role: 'user', createdAt: at });
    templateIds = [];
    for (let i = 0; i < TEMPLATES; i++) {
      const t = templateRecord({ ownerId: 'acc_a', isServerless: true, endpointId: i < ENDPOINTS ? `ep${i}` : null });
      await store.templates.insert(t);
      templateIds.push(t.id);
    }
    const raw = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
    try {
      const revisions = templateIds.flatMap((id) =>
        Array.from({ length: REVISIONS }, (_, r) => ({
          template_id: id,
          revision: r + 1,
          snapshot: '{}',
          diff: '[]',
          key_id: 'k',
          created_at: at,
        })),
      );
      for (let i = 0; i < revisions.length; i += 500)
        await raw
          .insertInto('template_revisions')
          .values(revisions.slice(i, i + 500))
          .execute();
      const endpoints = templateIds.slice(0, ENDPOINTS).map((id, i) => ({
        id: `ep${i}`,
        owner_id: 'acc_a',
        name: `ep${i}`,
        template_id: id,
        workers_min: 0,
        workers_max: 1,
        version: RELEASES,
        created_at: at,
        updated_at: at,
      }));
      await raw.insertInto('endpoints').values(endpoints).execute();
      const releases = endpoints.flatMap((e) =>
        Array.from({ length: RELEASES }, (_, v) => ({
          id: `rel_${e.id}_${v + 1}`,
          endpoint_id: e.id,
          version: v + 1,
          template_id: e.template_id,
          template_revision: v + 1,
          diff: '[]',
          status: v + 1 === RELEASES ? 'pending' : 'superseded',
          workers_updated: 0,
          workers_total: 0,
          created_at: at,
          updated_at: at,
        })),
      );
      for (let i = 0; i < releases.length; i += 200)
        await raw
          .insertInto('releases')
          .values(releases.slice(i, i + 200))
          .execute();
      const events = releases.map((r) => ({
        event_id: `evt_${r.id}`,
        type: 'release.created',
        subject_id: r.id,
        ordering_key: r.endpoint_id,
        payload: '{}',
        created_at: at,
        attempts: 1,
        next_attempt_at: at,
        delivered_at: r.status === 'pending' ? null : at,
      }));
      for (let i = 0; i < events.length; i += 200)
        await raw
          .insertInto('outbox')
          .values(events.slice(i, i + 200))
          .execute();
    } finally {
      await raw.destroy();
    }
    if (dialect === 'postgres') await plansOf(db.url, 'analyze');
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  test("pruning a template's oldest revisions reads down its primary key, only the rows it deletes", async () => {
    const q = store.templates.pruneRevisionsSql(templateIds[7] as string, 3);
    if (dialect === 'postgres') {
      const plan = (await plansOf(db.url, q)) as string;
      assert.doesNotMatch(plan, /Seq Scan/);
      assert.match(plan, /"Index Name":"template_revisions_pk"/);
      assert.match(plan, /"Actual Rows":3\b/);
    } else {
      const steps = (await plansOf(db.url, q)) as string[];
      assert.equal(steps.length, 1, steps.join('; '));
      assert.match(steps[0] as string, /^SEARCH template_revisions USING (COVERING )?INDEX \S+ \(template_id=\? AND revision<\?\)$/);
    }
  });

  test("finding an endpoint's prunable releases reads down (endpoint_id, version) and each one's outbox event", async () => {
    const q = store.endpoints.prunableReleasesSql('ep3', RELEASES - 5, 100);
    if (dialect === 'postgres') {
      const plan = (await plansOf(db.url, q)) as string;
      assert.doesNotMatch(plan, /Seq Scan/);
      // The endpoint's releases down one of its keys; the outbox down outbox_subject, or the (few) undelivered
      // events down the partial index outbox_pending, as the planner weighs them.
      assert.match(plan, /"Index Name":"releases_endpoint_(version_unique|seq)"/);
      assert.match(plan, /"Index Name":"outbox_(subject|pending)"/);
    } else {
      const steps = (await plansOf(db.url, q)) as string[];
      assert.ok(!steps.some((s) => s.startsWith('SCAN')), steps.join('; '));
      assert.ok(
        steps.some((s) => /^SEARCH r USING INDEX \S+ \(endpoint_id=\? AND version<\?\)$/.test(s)),
        steps.join('; '),
      );
      assert.ok(
        steps.some((s) => /^SEARCH o USING INDEX outbox_subject \(subject_id=\?\)$/.test(s)),
        steps.join('; '),
      );
    }
  });
});

/**
 * PostgreSQL: the JSON plan of `q`, run (EXPLAIN ANALYZE, so actual rows are counted) in a transaction rolled back;
 * SQLite: the steps of its query plan. With a string, runs it as it is.
 */
async function plansOf(url: string, q: CompiledQuery | string): Promise<string | string[]> {
  const [text, parameters] = typeof q === 'string' ? [q, []] : [q.sql, q.parameters as unknown[]];
  if (url.startsWith('sqlite:')) {
    const sqlite = new SQLite(url.slice('sqlite:'.length));
    try {
      return sqlite
        .prepare(`explain query plan ${text}`)
        .all(...parameters)
        .map((row) => (row as { detail: string }).detail);
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    if (typeof q === 'string') return JSON.stringify((await client.query(text)).rows);
    await client.query('begin');
    const rows = (await client.query(`explain (analyze, format json) ${text}`, parameters)).rows;
    await client.query('rollback');
    return JSON.stringify(rows[0]['QUERY PLAN']);
  } finally {
    await client.end();
  }
}
