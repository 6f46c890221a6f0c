import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isKind } from '../../src/domain/errors.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { TransactionMisuse } from '../../src/store/transactions/scope.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { at, templateRecord } from '../support/records.ts';

// A transaction is a value handed to the code that runs in it. Reaching past it, to the root store or into a second
// transaction, fails at once on both databases (on SQLite it used to wait for ever, holding every writer; on
// PostgreSQL it ran outside the transaction). A transaction that holds the database too long fails as unavailable.

const record = (overrides = {}) => templateRecord({ ownerId: 'acc_s', ...overrides });
// Long enough that a loaded machine gets the holder to its gate well within it (it once didn't, at 300 ms).
const LIMIT_MS = 1500;
// Each test would otherwise wait for ever on the code this replaces: a bound turns a hang into a failure.
const bounded = { timeout: 20_000 };

forEachDialect('the transaction scope', (dialect) => {
  let db: Database;
  let store: Store;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url), { transactionTimeoutMs: LIMIT_MS });
    await store.migrate();
    await store.transaction((tx) => tx.accounts.ensure({ id: 'acc_s', name: 's', role: 'user', createdAt: at }));
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  test('the root store used inside a transaction fails at once, and the transaction goes on', bounded, async () => {
    const [t, u] = [record(), record()];
    await store.transaction((tx) => tx.templates.insert(t));
    await store.transaction(async (tx) => {
      await tx.templates.insert(u);
      await assert.rejects(store.templates.find(t.id), TransactionMisuse);
      await assert.rejects(store.templates.findView(t.id), TransactionMisuse);
      // A list page too, though on SQLite pages take turns on a queue of their own.
      const visibility = { ownerId: t.ownerId, bound: false, public: true, platform: false, platformKey: false };
      await assert.rejects(store.templates.list({ visibility, limit: 10 }), TransactionMisuse);
      await assert.rejects(store.templates.list({ visibility, search: 'abc', limit: 10 }), TransactionMisuse);
      await assert.rejects(store.accounts.findPrincipal('d'.repeat(64)), TransactionMisuse);
      await assert.rejects(store.ping(), TransactionMisuse);
      assert.equal((await tx.templates.find(t.id))?.id, t.id);
    });
    assert.equal((await store.templates.find(u.id))?.id, u.id, 'the transaction committed');
  });

  test('the misuse is found however the call is reached: a helper, Promise.all, then, a class method', bounded, async () => {
    const t = record();
    await store.transaction((tx) => tx.templates.insert(t));
    const helper = async () => {
      await new Promise((resolve) => setImmediate(resolve));
      return store.templates.find(t.id);
    };
    class Reader {
      async read() {
        return helper();
      }
    }
    await store.transaction(async (tx) => {
      await tx.templates.find(t.id);
      await assert.rejects(helper(), TransactionMisuse);
      await assert.rejects(Promise.all([tx.templates.find(t.id), helper()]), TransactionMisuse);
      await assert.rejects(
        tx.templates.find(t.id).then(() => store.templates.find(t.id)),
        TransactionMisuse,
      );
      await assert.rejects(new Reader().read(), TransactionMisuse);
    });
    // The same calls outside any transaction are fine.
    assert.equal((await new Reader().read())?.id, t.id);
  });

  test('a transaction opened inside another fails at once; the outer one, failing with it, leaves nothing', bounded, async () => {
    const [t, u] = [record(), record()];
    const error = await store
      .transaction(async (tx) => {
        await tx.templates.insert(t);
        await store.transaction((inner) => inner.templates.insert(u));
      })
      .catch((e: unknown) => e);
    assert.ok(error instanceof TransactionMisuse, String(error));
    assert.match(error.message, /A transaction was opened inside a transaction/);
    assert.equal(await store.templates.find(t.id), undefined);
    assert.equal(await store.templates.find(u.id), undefined);
  });

  test('a transaction kept after it ended can no longer be used', bounded, async () => {
    const kept = await store.transaction(async (tx) => tx);
    await assert.rejects(kept.templates.insert(record()), { name: 'TransactionMisuse', message: 'A transaction was used after it ended' });
  });

  test('work started inside a transaction may use the root store once the transaction has ended', bounded, async () => {
    let later: Promise<unknown> = Promise.resolve();
    const t = record();
    await store.transaction(async (tx) => {
      await tx.templates.insert(t);
      // Runs in the transaction's async context, but after it ended.
      later = new Promise((resolve) => setTimeout(resolve, 50)).then(() => store.templates.find(t.id));
    });
    assert.equal(((await later) as { id: string } | undefined)?.id, t.id);
  });

  test('a transaction held past its time limit fails as unavailable, lands nothing, and writers behind it go on', bounded, async () => {
    const held = record();
    await store.transaction((tx) => tx.templates.insert(held));
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const [first, late] = [record(), record()];
    let heldOn = false;
    const holding = store.transaction(async (tx) => {
      // Locks the row the writer behind needs (PostgreSQL); on SQLite the transaction holds the only writer.
      await tx.templates.find(held.id, { lock: true });
      await tx.templates.insert(first);
      heldOn = true;
      await gate;
      await tx.templates.insert(late);
    });
    let settled = false;
    const outcome = holding.then(
      () => 'committed',
      (error: unknown) => error,
    );
    void outcome.finally(() => {
      settled = true;
    });
    while (!heldOn && !settled) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.ok(heldOn, `the holder reached its gate before its time limit: ${String(await Promise.race([outcome, 'still running']))}`);
    // The writer behind starts well after the holder, so the holder's limit ends long before its own: on a loaded
    // machine, the holder's rollback can take longer than the few milliseconds between their starts.
    await new Promise((resolve) => setTimeout(resolve, LIMIT_MS / 2));
    // Waits behind the holder: for ever, without a time limit, since the gate opens only after this.
    const behind = await store.transaction(async (tx) => {
      const current = await tx.templates.find(held.id, { lock: true });
      assert.ok(current);
      return tx.templates.replace({ ...current, readme: 'changed behind', revision: 2 }, 1);
    });
    assert.equal(behind, true);
    const error = await outcome;
    assert.ok(isKind(error, 'unavailable'), String(error));
    assert.match((error as Error).message, new RegExp(`longer than ${LIMIT_MS} ms`));
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await store.templates.find(first.id), undefined, 'rolled back');
    assert.equal(await store.templates.find(late.id), undefined, 'its work, resumed late, could not write');
    assert.equal((await store.templates.find(held.id))?.readme, 'changed behind');
  });
});
