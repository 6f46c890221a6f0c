import { DomainError, forbidden, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Page } from '../domain/page.ts';
import { NO_QUOTAS, type Quotas, quotaExceeded } from '../domain/quota.ts';
import type { RegistryAuthCreate, RegistryAuthCredentials, RegistryAuthRecord } from '../domain/registry-auth.ts';
import { now } from '../domain/time.ts';
import type { Caller } from '../domain/visibility.ts';
import type { Keyring } from '../sealing/keyring.ts';
import { REGISTRY_AUTH_PASSWORDS, sealedContext } from '../store/sealed.ts';
import type { Store } from '../store/store.ts';

// Use cases of container registry auths: create, list, delete, and their credentials for the platform.

/** How many of the templates that still use an auth a refused delete names. */
const NAMED_USERS = 3;

/**
 * What users do with their container registry auths, and how the platform reads one back: each use case one
 * transaction. The password is sealed before it reaches the store, and opened only for a platform key.
 */
export class RegistryAuths {
  private readonly store: Store;
  private readonly keyring: () => Keyring;
  private readonly quotas: Quotas;

  constructor(store: Store, keyring: () => Keyring, quotas: Quotas = NO_QUOTAS) {
    this.store = store;
    this.keyring = keyring;
    this.quotas = quotas;
  }

  async create(caller: Caller, input: RegistryAuthCreate): Promise<RegistryAuthRecord> {
    const auth: RegistryAuthRecord = {
      id: newId(),
      ownerId: caller.accountId,
      name: input.name,
      username: input.username,
      createdAt: now(),
    };
    const sealedPassword = this.keyring().seal(input.password, sealedContext(REGISTRY_AUTH_PASSWORDS, auth.id));
    await this.store.transaction(async (tx) => {
      await tx.registryAuths.insert({ ...auth, sealedPassword });
      // Judged after the insert, under the usage row its trigger locked: concurrent creates take turns (migration 0012).
      if (this.quotas.registryAuths > 0) {
        const problem = quotaExceeded(await tx.accounts.usage(caller.accountId), { registryAuths: 1 }, this.quotas);
        if (problem) throw problem;
      }
    });
    return auth;
  }

  /** The caller's own auths, newest first. */
  list(caller: Caller, limit: number, before?: number): Promise<Page<RegistryAuthRecord>> {
    return this.store.registryAuths.list(caller.accountId, limit, before);
  }

  /** One of the caller's own auths; anybody else's is a 404, like a missing one. */
  async get(caller: Caller, id: string): Promise<RegistryAuthRecord> {
    const auth = await this.store.registryAuths.find(id);
    if (!auth || auth.ownerId !== caller.accountId) throw notFound('registry auth');
    return auth;
  }

  /**
   * Deletes one of the caller's auths; a conflict naming the caller's templates that still refer to it (checked under
   * the auth's lock). Another account's template may never name it: such a reference (written around the API) is
   * cleared, and neither blocks the delete nor is named.
   */
  async delete(caller: Caller, id: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      if (!(await tx.registryAuths.lockOwned(id, caller.accountId))) throw notFound('registry auth');
      await tx.templates.forgetForeignRegistryAuth(id, caller.accountId);
      const users = await tx.templates.referringTo(id, NAMED_USERS);
      if (users.length > 0) {
        const named = users.map((t) => `${t.id} (${JSON.stringify(t.name)})`).join(', ');
        throw new DomainError(
          'conflict',
          `Templates still use this registry auth, such as ${named}: set their containerRegistryAuthId to "" or another auth first.`,
        );
      }
      await tx.registryAuths.delete(id);
    });
  }

  /** The username and password, for the platform that pulls the image; users are refused whatever the id. */
  async credentials(caller: Caller, id: string): Promise<RegistryAuthCredentials> {
    if (caller.role !== 'platform') throw forbidden('Only platform keys read registry credentials.');
    const auth = await this.store.registryAuths.findSealed(id);
    if (!auth) throw notFound('registry auth');
    return { username: auth.username, password: this.keyring().open(auth.sealedPassword, sealedContext(REGISTRY_AUTH_PASSWORDS, id)) };
  }
}
