// Rules of the store that the compiler keeps: each line marked @ts-expect-error must fail to compile. `npm run lint`
// type-checks this file (tsc), so a rule that stops holding fails the lint; test/store/rules.test.ts holds the halves
// that are checked as the code runs.
import type { Kysely } from 'kysely';
import type { Change } from '../../src/store/cache/change-names.ts';
import { Statement } from '../../src/store/core.ts';
import type { Tables } from '../../src/store/schema.ts';
import type { Reads, Store, Transaction } from '../../src/store/store.ts';

export function rootStoreReadsOnly(store: Store, tx: Transaction, template: Parameters<Transaction['templates']['insert']>[0]) {
  // @ts-expect-error: the root store has no writes; they exist only on a transaction
  void store.templates.insert(template);
  // @ts-expect-error: nor any other repository's
  void store.accounts.revokeKey('key_1', 'now');
  // @ts-expect-error: nor the outbox's
  void store.outbox.markDelivered(1, 'lease', 'now');
  void tx.templates.insert(template);
  // What both offer is their reads: code that only reads takes either.
  const reads: Reads[] = [store, tx];
  return reads;
}

export function statementsBindTheirSql(db: Kysely<Tables>) {
  const find = new Statement((d, id: string) => d.selectFrom('templates').select('id').where('id', '=', id));
  void find.compiledFor(db, 'sqlite', ['tmpl_1']);
  // @ts-expect-error: a statement is run with the parameters its SQL was built with, typed
  void find.compiledFor(db, 'sqlite', [1]);
}

export function changesAreTyped(change: Change): string {
  switch (change.kind) {
    case 'template':
      return change.id;
    case 'key':
      return change.digest;
    case 'account':
      return change.id;
    case 'everything':
      return '*';
    default:
      // A kind of change added without the cache reading it fails here.
      return change satisfies never;
  }
}

export function changeKindsAreClosed(): Change {
  // @ts-expect-error: a change is one of the kinds the cache reads, not any text
  return { kind: 'endpoint', id: 'ep_1' };
}
