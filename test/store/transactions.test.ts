import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { isKind } from '../../src/domain/errors.ts';
import { type TemplateRecord, type TemplateView, templateJson } from '../../src/domain/template.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { GroupCommit } from '../../src/store/transactions/group-commit.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { at, templateRecord } from '../support/records.ts';

// Transactions asked for at once (on SQLite, committed as one group): each lands or fails on its own, and
// nothing is seen or acknowledged before its commit.

const record = (overrides: Partial<TemplateRecord> = {}) => templateRecord({ ownerId: 'acc_t', ...overrides });

forEachDialect('concurrent transactions', (dialect) => {
  let db: Database;
  let store: Store;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    await store.transaction((tx) => tx.accounts.ensure({ id: 'acc_t', name: 't', role: 'user', createdAt: at }));
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  test('of 20 at once, the one that throws leaves nothing and the other 19 land', async () => {
    const templates = Array.from({ length: 20 }, () => record());
    const results = await Promise.allSettled(
      templates.map((t, i) =>
        store.transaction(async (tx) => {
          await tx.templates.insert(t);
          await tx.templates.replace({ ...t, readme: 'changed', revision: 2 }, 1);
          if (i === 7) throw new Error('abort 7');
          return i;
        }),
      ),
    );
    results.forEach((r, i) => {
      if (i === 7) assert.equal(r.status === 'rejected' && (r.reason as Error).message, 'abort 7');
      else assert.deepEqual(r, { status: 'fulfilled', value: i });
    });
    for (const [i, t] of templates.entries()) {
      const stored = await store.templates.find(t.id);
      if (i === 7) assert.equal(stored, undefined);
      else assert.deepEqual([stored?.revision, stored?.readme], [2, 'changed']);
    }
  });

  test('a unique violation in one fails that one alone', async () => {
    const results = await Promise.allSettled(
      [record({ name: 'same' }), record({ name: 'same' }), record({ name: 'other' })].map((t) =>
        store.transaction((tx) => tx.templates.insert(t)),
      ),
    );
    // On SQLite the first asked wins; on PostgreSQL, whichever of the two commits first.
    const [a, b, other] = results;
    assert.deepEqual([a?.status, b?.status].sort(), ['fulfilled', 'rejected']);
    const rejected = [a, b].find((r) => r?.status === 'rejected') as PromiseRejectedResult;
    assert.ok(isKind(rejected.reason, 'conflict'), String(rejected.reason));
    assert.equal(other?.status, 'fulfilled');
  });

  test('a read does not see a transaction before it commits', async () => {
    const t = record();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted = () => {};
    const insertedYet = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const writing = store.transaction(async (tx) => {
      await tx.templates.insert(t);
      inserted();
      await gate;
    });
    await insertedYet;
    // Both lookups a read by id makes: the whole record, and the view GET sends.
    const reads: (TemplateRecord | TemplateView | undefined | 'pending')[] = ['pending', 'pending'];
    const reading = Promise.all([store.templates.find(t.id), store.templates.findView(t.id)]).then((r) => reads.splice(0, 2, ...r));
    await new Promise((r) => setTimeout(r, 50));
    // Either still waiting (SQLite: one connection) or answered from before the write (PostgreSQL).
    for (const read of reads) assert.ok(read === 'pending' || read === undefined, 'no dirty read');
    release();
    await Promise.all([writing, reading]);
    assert.equal((await store.templates.find(t.id))?.id, t.id);
    assert.equal((await store.templates.findView(t.id))?.json, templateJson(t));
  });
});

test('group commit: when the shared commit fails, every transaction of the group fails and none lands', async () => {
  const db = await freshDatabase('sqlite');
  const kysely = new Kysely<Record<string, { id: number; parent: number | null }>>({ dialect: dialectFor(db.url).kysely });
  try {
    await sql`create table node (id integer primary key, parent integer references node(id))`.execute(kysely);
    const groups = new GroupCommit(kysely, {}, 5000);
    const insert = (id: number, parent: number | null) => (c: typeof kysely) => sql`insert into node values (${id}, ${parent})`.execute(c);
    const results = await Promise.allSettled([
      // Foreign keys checked only at COMMIT: the second insert makes the whole group's commit fail.
      groups.run(async (c) => {
        await sql`pragma defer_foreign_keys = on`.execute(c);
        await insert(1, null)(c);
      }),
      groups.run(insert(2, 99)),
      groups.run(insert(3, 1)),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected', 'rejected'],
    );
    const count = async () => (await sql<{ n: number }>`select count(*) as n from node`.execute(kysely)).rows[0]?.n;
    assert.equal(await count(), 0);
    // The connection is usable afterwards, and a group of one commits.
    await groups.run(insert(4, null));
    assert.equal(await count(), 1);
  } finally {
    await kysely.destroy();
    await db.drop();
  }
});
