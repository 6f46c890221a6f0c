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
    await store.transaction((tx) => tx.accounts.ensure({ id: 'acc_a', name: 'acc_a', role: 'user', createdAt: at }));
    templateIds = [];
    for (let i = 0; i < TEMPLATES; i++) {
      const t = templateRecord({ ownerId: 'acc_a', isServerless: true, endpointId: i < ENDPOINTS ? `ep${i}` : null });
      await store.transaction((tx) => tx.templates.insert(t));
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

  test("finding an endpoint's prunable releases reads down (endpoint_id, version)", async () => {
    const q = store.endpoints.prunableReleasesSql('ep3', RELEASES - 5, 100);
    if (dialect === 'postgres') {
      const plan = (await plansOf(db.url, q)) as string;
      assert.doesNotMatch(plan, /Seq Scan/);
      // The endpoint's releases down one of its keys.
      assert.match(plan, /"Index Name":"releases_endpoint_(version_unique|seq)"/);
    } else {
      const steps = (await plansOf(db.url, q)) as string[];
      assert.ok(!steps.some((s) => s.startsWith('SCAN')), steps.join('; '));
      assert.ok(
        steps.some((s) => /^SEARCH r USING INDEX \S+ \(endpoint_id=\? AND version<\?\)$/.test(s)),
        steps.join('; '),
      );
    }
  });
});

/** The rows a PostgreSQL plan's scans passed on and filtered out, over every loop. */
function examinedIn(plan: string): number {
  return [
    ...plan.matchAll(
      /"Node Type":"[^"]*Scan","(?:[^{}]*?)"Actual Rows":(\d+),"Actual Loops":(\d+)(?:[^{}]*?"Rows Removed by Filter":(\d+))?/g,
    ),
  ].reduce((sum, [, rows, loops, removed]) => sum + (Number(rows) + Number(removed ?? 0)) * Number(loops), 0);
}

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

// The outbox's own queries read down the partial indexes of migration 0009: the deliverer finds the due events among
// the undelivered ones only (outbox_pending, and outbox_pending_ordering for "first in line for its key"), and the
// purge finds the oldest deliveries down outbox_delivered. 20,000 delivered events, 60 undelivered over 6 keys.
const DELIVERED = 20_000;
const PENDING = 60;

forEachDialect('the plans of the outbox', (dialect) => {
  let db: Database;
  let store: Store;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    const raw = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
    try {
      const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString();
      const events = Array.from({ length: DELIVERED + PENDING }, (_, i) => ({
        event_id: `evt_${i}`,
        type: 'release.created',
        subject_id: `rel_${i}`,
        ordering_key: `ep${i % 200}`,
        payload: '{}',
        created_at: day(i),
        attempts: 1,
        next_attempt_at: day(i),
        delivered_at: i < DELIVERED ? day(i + 1) : null,
      }));
      // The undelivered ones go to 6 keys of their own, 10 each: one due per key, the rest behind it.
      for (const [i, event] of events.slice(DELIVERED).entries()) event.ordering_key = `pending${i % 6}`;
      for (let i = 0; i < events.length; i += 500)
        await raw
          .insertInto('outbox')
          .values(events.slice(i, i + 500))
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

  test('the due events are found among the undelivered ones, and each checked against its key down the pending index', async () => {
    const now = '2027-01-01T00:00:00.000Z';
    const claimed = await store.transaction((tx) => tx.outbox.claimDue(now, now, 'lease', 100));
    assert.equal(claimed.length, 6, 'one event per key: the first in line');
    const q = store.outbox.dueSql(now, 100);
    if (dialect === 'postgres') {
      const plan = (await plansOf(db.url, q)) as string;
      assert.doesNotMatch(plan, /Seq Scan/);
      // Both sides (the events, and the earlier ones of each key) are read down the partial indexes of the
      // undelivered: PostgreSQL may join them by hashing, which reads them all, and only them.
      const indexes = new Set([...plan.matchAll(/"Index Name":"(\w+)"/g)].map(([, name]) => name));
      assert.deepEqual(
        [...indexes].filter((name) => !name?.startsWith('outbox_pending')),
        [],
        plan,
      );
      assert.ok(indexes.size > 0, plan);
      const examined = examinedIn(plan);
      assert.ok(examined < 10 * PENDING, `examined ${examined} rows of ${DELIVERED + PENDING}`);
    } else {
      const steps = (await plansOf(db.url, q)) as string[];
      assert.ok(
        steps.some((s) => /^(SCAN|SEARCH) o USING INDEX outbox_pending(_account)?\b/.test(s)),
        steps.join('; '),
      );
      assert.ok(
        steps.some((s) => /^SEARCH earlier USING (COVERING )?INDEX outbox_pending_ordering \(ordering_key=\? AND seq<\?\)$/.test(s)),
        steps.join('; '),
      );
      assert.ok(!steps.some((s) => /^SCAN (o|earlier)$/.test(s)), steps.join('; '));
    }
  });

  if (dialect === 'postgres')
    test('a burst of events after the statistics were taken is read once, not each event against every other', async () => {
      // Analyzed with none undelivered, then 1,000 events, each its own key: as after a quiet hour, a busy minute.
      const raw = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
      const pending = (await raw.selectFrom('outbox').select('seq').where('delivered_at', 'is', null).execute()).map((r) => r.seq);
      await raw.updateTable('outbox').set({ delivered_at: '2026-06-01T00:00:00.000Z' }).where('seq', 'in', pending).execute();
      await plansOf(db.url, 'analyze outbox');
      try {
        const at = '2026-06-01T00:00:00.000Z';
        const burst = Array.from({ length: 1_000 }, (_, i) => ({
          event_id: `evt_burst_${i}`,
          type: 'release.created',
          subject_id: `rel_burst_${i}`,
          ordering_key: `burst${i}`,
          payload: '{}',
          created_at: at,
          next_attempt_at: at,
        }));
        await raw.insertInto('outbox').values(burst).execute();
        const plan = (await plansOf(db.url, store.outbox.dueSql('2027-01-01T00:00:00.000Z', 16))) as string;
        const examined = examinedIn(plan);
        assert.ok(examined < 3 * (PENDING + 1_000), `examined ${examined} rows: ${plan}`);
      } finally {
        await raw.deleteFrom('outbox').where('event_id', 'like', 'evt_burst_%').execute();
        await raw.updateTable('outbox').set({ delivered_at: null }).where('seq', 'in', pending).execute();
        await plansOf(db.url, 'analyze outbox');
        await raw.destroy();
      }
    });

  test('the purge reads the oldest deliveries down their partial index, only the rows it deletes', async () => {
    const q = store.outbox.purgeSql('2026-01-05T00:00:00.000Z', 500);
    if (dialect === 'postgres') {
      const plan = (await plansOf(db.url, q)) as string;
      assert.doesNotMatch(plan, /Seq Scan/);
      assert.match(plan, /"Index Name":"outbox_delivered"/);
      // The batch, then each of its rows by the primary key.
      assert.match(plan, /"Index Name":"outbox_pkey"/);
      assert.ok(examinedIn(plan) <= 2 * 500, `examined ${examinedIn(plan)} rows to delete 500`);
    } else {
      const steps = (await plansOf(db.url, q)) as string[];
      assert.ok(
        steps.some((s) => /^SEARCH outbox USING (COVERING )?INDEX outbox_delivered \((delivered_at>\? AND )?delivered_at<\?\)$/.test(s)),
        steps.join('; '),
      );
      assert.ok(!steps.some((s) => s.startsWith('SCAN outbox')), steps.join('; '));
    }
    const purged = await store.transaction((tx) => tx.outbox.purgeDelivered('2026-01-05T00:00:00.000Z', 500));
    assert.equal(purged, 500);
  });
});
