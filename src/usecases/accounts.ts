import { type Account, type AccountCreate, accountName } from '../domain/account.ts';
import { conflict, forbidden } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { now } from '../domain/time.ts';
import type { Caller } from '../domain/visibility.ts';
import type { Store } from '../store/store.ts';

// Use cases of accounts: a platform key provisions them over the API (a GPU cloud's sign-up), no database access needed.

export class Accounts {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  /** `POST /v1/accounts`: platform keys only; a name taken is a 409. Its keys are made by `Keys.createFor`. */
  async create(caller: Caller, input: AccountCreate): Promise<Account> {
    if (caller.role !== 'platform') throw forbidden('Only platform keys make accounts.');
    if (caller.access === 'read') throw forbidden('This API key is read-only: it may not make accounts.');
    const name = accountName(input.name);
    const account = { id: newId('acc_'), name, role: input.role ?? 'user', createdAt: now() };
    const made = await this.store.transaction((tx) => tx.accounts.insert(account));
    if (!made) throw conflict(`An account named ${name} exists already.`, [{ path: '/name', message: 'is taken' }]);
    return { name: account.name, role: account.role, createdAt: account.createdAt };
  }
}
