import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import type { ListPosition } from '../../src/domain/page.ts';
import { templateJson } from '../../src/domain/template.ts';
import { visibilityFor } from '../../src/domain/visibility.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { at, templateRecord } from '../support/records.ts';

// The store's contract, the same on every dialect: what is written reads back exactly, constraints hold.

const record = templateRecord;

forEachDialect('store contract', (dialect) => {
  let db: Database;
  let store: Store;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    await store.migrate(); // idempotent
    for (const [id, name, role] of [
      ['acc_a', 'a', 'user'],
      ['acc_b', 'b', 'user'],
      ['acc_p', 'p', 'platform'],
    ] as const) {
      await store.transaction((tx) => tx.accounts.ensure({ id, name, role, createdAt: at }));
    }
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  // PostgreSQL only: SQLite has no schemas.
  if (dialect === 'postgres') {
    test('another install in another schema of the same database migrates on its own', async () => {
      const other = await freshDatabase('postgres');
      const second = Store.open(dialectFor(other.url));
      try {
        await second.migrate();
        assert.equal(await second.accounts.countKeys(), 0);
      } finally {
        await second.close();
        await other.drop();
      }
    });

    test('the hot queries, and only they, run as prepared statements naming their columns', async () => {
      const dialect = dialectFor(db.url, { poolSize: 1, statementTimeoutMs: 5000, connectionTimeoutMs: 5000 });
      const one = Store.open(dialect);
      // The same pool of one connection, to ask that connection what it has prepared.
      const raw = new Kysely<Record<string, Record<string, unknown>>>({ dialect: dialect.kysely });
      try {
        const t = record({ name: 'prepared' });
        await one.transaction((tx) => tx.templates.insert(t));
        for (let i = 0; i < 3; i++) {
          assert.equal((await one.templates.findView(t.id))?.revision, 1);
          assert.equal((await one.templates.find(t.id))?.id, t.id);
        }
        await one.templates.list({ visibility: visibilityFor({ accountId: 'acc_a', role: 'user' }, {}), limit: 5 });
        const prepared = (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(raw)).rows;
        assert.equal(prepared.length, 3, JSON.stringify(prepared));
        assert.ok(prepared.some((p) => p.statement.startsWith('insert into "templates"')));
        for (const { statement } of prepared) assert.doesNotMatch(statement, /select \*|union/);
      } finally {
        await one.close();
      }
    });
  }

  test('a template reads back exactly as written: JSON order, unicode, numbers, booleans, timestamps', async () => {
    const t = record({
      name: 'ünïcødé ✓ 名前 \u{1F680}',
      env: { ZED: 'z', ALPHA: 'a', EMPTY: '', QUOTE: '"\'\\\n' },
      ports: ['8888/http', '22/tcp'],
      dockerEntrypoint: ['sh', '-c', 'echo "$HOME"'],
      readme: '# Title\n\n<script>x</script>',
      isPublic: true,
      isServerless: true,
      earned: 1234.5678,
      runtimeInMin: 2 ** 40,
      category: 'CPU',
    });
    await store.transaction((tx) => tx.templates.insert(t));
    const back = await store.templates.find(t.id);
    assert.deepEqual(back, t);
    assert.equal(JSON.stringify(back), JSON.stringify(t), 'key order too');
  });

  test('every write keeps the stored representation equal to the template as the API shows it', async () => {
    const t = record({ isPublic: true, readme: 'first', env: { A: '1' } });
    const shown = async () => {
      const [template, view] = await Promise.all([store.templates.find(t.id), store.templates.findView(t.id)]);
      assert.ok(template && view);
      assert.equal(view.json, templateJson(template));
      return { template, view };
    };
    await store.transaction((tx) => tx.templates.insert(t));
    assert.deepEqual((await shown()).view, {
      ownerId: 'acc_a',
      isPublic: true,
      isPlatform: false,
      bound: false,
      revision: 1,
      imageCheck: { status: t.imageCheck.status, checkedAt: t.imageCheck.checkedAt },
      registryAuthId: '',
      json: templateJson(t),
    });
    assert.equal(
      await store.transaction((tx) => tx.templates.replace({ ...t, readme: 'second', ports: ['22/tcp'], revision: 2 }, 1)),
      true,
    );
    assert.equal(JSON.parse((await shown()).view.json).readme, 'second');
    await store.transaction(async (tx) => {
      assert.equal(await tx.usage.insert({ usageId: `u-${t.id}`, templateId: t.id, runtimeInMin: 7, earned: 1.5, createdAt: at }), true);
      await tx.templates.addUsage(t.id, 7, 1.5);
    });
    const afterUsage = JSON.parse((await shown()).view.json);
    assert.deepEqual([afterUsage.runtimeInMin, afterUsage.earned, afterUsage.revision], [7, 1.5, 2]);
    const listed = await store.templates.list({
      visibility: visibilityFor({ accountId: 'acc_a', role: 'user' }, {}),
      limit: 100,
      search: 'name',
    });
    const json = (await shown()).view.json;
    assert.ok(listed.items.some((item) => item.ownerId === 'acc_a' && item.json === json));
    assert.equal(await store.templates.findView('nosuchtemplate00'), undefined);
  });

  test('representations missing (cleared, or written around the store) are built on read and by migrate', async () => {
    const t = record({ isPublic: true, name: 'cleared' });
    await store.transaction((tx) => tx.templates.insert(t));
    const raw = new Kysely<Record<string, Record<string, unknown>>>({ dialect: dialectFor(db.url).kysely });
    const bodyOf = async () =>
      (await sql<{ body: string | null }>`select body from templates where id = ${t.id}`.execute(raw)).rows[0]?.body;
    try {
      await sql`update templates set body = null where id = ${t.id}`.execute(raw);
      assert.equal((await store.templates.findView(t.id))?.json, templateJson(t));
      const listed = await store.templates.list({
        visibility: visibilityFor({ accountId: 'acc_a', role: 'user' }, {}),
        limit: 1,
        search: 'cleared',
      });
      assert.deepEqual(listed.items, [{ ownerId: 'acc_a', registryAuthId: '', ownerName: 'a', json: templateJson(t) }]);
      assert.equal(await bodyOf(), null, 'reads do not write');
      await store.migrate();
      assert.equal(await bodyOf(), templateJson(t));
    } finally {
      await raw.destroy();
    }
  });

  test('names are unique per owner, not across owners', async () => {
    const t = record({ name: 'dup' });
    await store.transaction((tx) => tx.templates.insert(t));
    const taken = { name: 'DomainError', kind: 'conflict', message: 'You already have a template with this name.' };
    await assert.rejects(
      store.transaction((tx) => tx.templates.insert(record({ name: 'dup' }))),
      taken,
    );
    await store.transaction((tx) => tx.templates.insert(record({ name: 'dup', ownerId: 'acc_b' })));
    const other = record({ name: 'other' });
    await store.transaction((tx) => tx.templates.insert(other));
    await assert.rejects(
      store.transaction((tx) => tx.templates.replace({ ...other, name: 'dup', revision: 2 }, 1)),
      taken,
    );
  });

  test('replace is conditional on the revision', async () => {
    const t = record();
    await store.transaction((tx) => tx.templates.insert(t));
    assert.equal(await store.transaction((tx) => tx.templates.replace({ ...t, readme: 'x', revision: 2 }, 1)), true);
    assert.equal(await store.transaction((tx) => tx.templates.replace({ ...t, readme: 'y', revision: 2 }, 1)), false);
    assert.equal((await store.templates.find(t.id))?.readme, 'x');
    assert.equal(await store.transaction((tx) => tx.templates.replace({ ...t, id: 'nosuchtemplate00', revision: 2 }, 1)), false);
  });

  test('a transaction that fails leaves nothing behind', async () => {
    const t = record();
    await assert.rejects(
      store.transaction(async (tx) => {
        await tx.templates.insert(t);
        throw new Error('abort');
      }),
      /abort/,
    );
    assert.equal(await store.templates.find(t.id), undefined);
  });

  test('binding: one endpoint per template, bound templates cannot be deleted, unbinding on endpoint delete', async () => {
    const t = record({ isServerless: true });
    await store.transaction((tx) => tx.templates.insert(t));
    const endpoint = {
      id: `ep${t.id}`,
      ownerId: 'acc_a',
      name: `ep ${t.id}`,
      templateId: t.id,
      workersMin: 0,
      workersMax: 3,
      version: 1,
      createdAt: at,
      updatedAt: at,
    };
    await store.transaction((tx) => tx.endpoints.create(endpoint));
    assert.deepEqual(await store.endpoints.find(endpoint.id), endpoint);
    await assert.rejects(
      store.transaction((tx) => tx.endpoints.create({ ...endpoint, id: 'ep-other', name: 'other' })),
      {
        kind: 'conflict',
        message: 'The template is already bound to an endpoint.',
      },
    );
    assert.equal((await store.templates.find(t.id))?.endpointId, endpoint.id);
    assert.equal(await store.transaction((tx) => tx.templates.delete(t.id, 1)), false, 'bound');
    assert.equal(await store.transaction((tx) => tx.endpoints.delete(endpoint.id)), true);
    assert.equal(await store.transaction((tx) => tx.endpoints.delete(endpoint.id)), false, 'gone');
    assert.equal((await store.templates.find(t.id))?.endpointId, null);
    assert.equal(await store.transaction((tx) => tx.templates.delete(t.id, 2)), false, 'not at that revision');
    assert.equal(await store.transaction((tx) => tx.templates.delete(t.id, 1)), true);
  });

  test('lists page by position, newest first, within the visibility', async () => {
    const owner = 'acc_b';
    const mine: string[] = [];
    for (let i = 0; i < 7; i++) {
      const t = record({ ownerId: owner, name: `page ${i}` });
      await store.transaction((tx) => tx.templates.insert(t));
      mine.unshift(t.id);
    }
    const visibility = visibilityFor({ accountId: owner, role: 'user' }, {});
    const seen: string[] = [];
    let before: ListPosition | undefined;
    do {
      const page = await store.templates.list({ visibility, limit: 3, before, search: 'page' });
      seen.push(...page.items.map((item) => JSON.parse(item.json).id));
      before = page.next;
    } while (before !== undefined);
    assert.deepEqual(seen, mine);
  });

  test('keys: digests, revocation, role of the account', async () => {
    await store.transaction((tx) =>
      tx.accounts.insertKey({
        id: 'key_1',
        accountId: 'acc_a',
        digest: 'd'.repeat(64),
        prefix: 'pp_abcd',
        createdAt: at,
        label: 'ci',
        access: 'read',
        expiresAt: '2999-01-01T00:00:00.000Z',
      }),
    );
    const principal = await store.accounts.findPrincipal('d'.repeat(64));
    assert.deepEqual(principal, {
      keyId: 'key_1',
      accountId: 'acc_a',
      accountName: 'a',
      role: 'user',
      digest: 'd'.repeat(64),
      revokedAt: null,
      access: 'read',
      expiresAt: '2999-01-01T00:00:00.000Z',
    });
    assert.equal(await store.transaction((tx) => tx.accounts.revokeKey('key_1', at)), true);
    assert.equal(await store.transaction((tx) => tx.accounts.revokeKey('key_1', at)), false);
    assert.equal((await store.accounts.findPrincipal('d'.repeat(64)))?.revokedAt, at);
    assert.equal(await store.accounts.findPrincipal('e'.repeat(64)), undefined);
    await assert.rejects(
      store.transaction((tx) => tx.accounts.ensure({ id: 'acc_x', name: 'a', role: 'platform', createdAt: at })),
      /has role user/,
    );
  });
});
