import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import type { Core } from '../../src/store/core.ts';
import { RowInsert, Statement } from '../../src/store/core.ts';
import type { Tables } from '../../src/store/schema.ts';
import type { Transaction } from '../../src/store/store.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// The store's rules, kept by construction (their compile-time halves are test/types/store-rules.ts, which
// `npm run lint` type-checks): statements bound to their SQL, rows inserted by column name, and every change a
// transaction makes forgotten by the writer's read cache without any code announcing it.

/** A transaction's query builder, as a repository method that forgot to announce its change would use it. */
const rawOf = (tx: Transaction): Kysely<Tables> => (tx.templates as unknown as { core: Core }).core.db;

forEachDialect('rules of the store', (dialect) => {
  let h: Harness;
  let key: string;
  before(async () => {
    h = await startHarness(dialect);
    key = await h.key('alice');
  });
  after(() => h.close());

  test('a change written by any statement of a transaction is read back at once by the process that wrote it', async () => {
    const created = await h.call('POST', '/v1/templates', { key, body: templateBody({ name: 'before' }) });
    const id = created.body.id as string;
    // Read twice: the view is now in the read cache.
    for (let i = 0; i < 2; i++) assert.match((await h.store.templates.findView(id))?.json ?? '', /"name":"before"/);
    await h.store.transaction(async (tx) => {
      await sql`update templates set name = 'after' where id = ${id}`.execute(rawOf(tx));
    });
    assert.match((await h.store.templates.findView(id))?.json ?? '', /"name":"after"/);
    const read = await h.call('GET', `/v1/templates/${id}`, { key });
    assert.equal(read.body.name, 'after');
  });

  test('an API key revoked by a statement no code announces is refused at once', async () => {
    const other = await h.key('bob');
    assert.equal((await h.call('GET', '/v1/me', { key: other })).status, 200);
    await h.store.transaction(async (tx) => {
      await sql`update api_keys set revoked_at = '2026-01-01T00:00:00.000Z' where account_id = (select id from accounts where name = 'bob')`.execute(
        rawOf(tx),
      );
    });
    assert.equal((await h.call('GET', '/v1/me', { key: other })).status, 401);
  });

  test('a statement run with another number of parameters than it was compiled with fails at once', async () => {
    const find = new Statement((db, id: string) => db.selectFrom('templates').select('id').where('id', '=', id));
    await h.store.transaction(async (tx) => {
      const core = (tx.templates as unknown as { core: Core }).core;
      assert.deepEqual(await core.run(find, 'tmpl_none'), []);
      await assert.rejects(
        () => core.run(find as unknown as Statement<unknown, [string, string]>, 'a', 'b'),
        /compiled with 1 parameters was run with 2/,
      );
    });
  });

  test('rows are inserted by column name, whatever the order of their keys; a row of other columns is refused', async () => {
    const insert = new RowInsert('accounts');
    await h.store.transaction(async (tx) => {
      const core = (tx.templates as unknown as { core: Core }).core;
      await core.insertRow(insert, {
        id: 'acc_rule_1',
        name: 'rule-one',
        name_key: 'rule-one',
        role: 'user',
        created_at: '2026-01-01T00:00:00.000Z',
      });
      await core.insertRow(insert, {
        created_at: '2026-01-02T00:00:00.000Z',
        role: 'platform',
        name_key: 'rule-two',
        name: 'rule-two',
        id: 'acc_rule_2',
      });
      await assert.rejects(
        () => core.insertRow(insert, { id: 'acc_rule_3', name: 'rule-three', role: 'user' } as never),
        /a row of id, name, role given to an insert of id, name, name_key, role, created_at/,
      );
    });
    const names = await h.store.accounts.findByName('rule-two');
    assert.equal(names?.id, 'acc_rule_2');
    assert.equal(names?.role, 'platform');
  });
});
