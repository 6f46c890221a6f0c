import { DomainError, forbidden, invalid, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Page } from '../domain/page.ts';
import { NO_QUOTAS, type Quotas, secretsQuotaExceeded } from '../domain/quota.ts';
import type { RegistryAuthCredentials } from '../domain/registry-auth.ts';
import { referencedNames, resolveEnv, type SecretRecord } from '../domain/secret.ts';
import type { Template } from '../domain/template.ts';
import { now } from '../domain/time.ts';
import { type Caller, isVisible, widestVisibility } from '../domain/visibility.ts';
import type { Keyring } from '../sealing/keyring.ts';
import { REGISTRY_AUTH_PASSWORDS, SECRET_VALUES, sealedContext } from '../store/sealed.ts';
import type { Store } from '../store/store.ts';

// Use cases of the accounts' own secrets, and a template resolved with them for a launch.

/** A template ready to launch for one account: its env with that account's secrets in place of the references. */
export interface ResolvedTemplate {
  template: Template;
  /** The registry credentials, when the launching account owns the template and it names an auth; else null. */
  containerRegistryCredentials: RegistryAuthCredentials | null;
  /** The digest the template's revision is pinned to; null when none was verified. */
  imageDigest: string | null;
}

/**
 * What users do with their secrets, and how the platform resolves a template's references for the account that
 * launches it: each use case one transaction. A value is sealed before it reaches the store, and opened only to
 * resolve a template for a platform key; it is never logged, shown or stored in plain text.
 */
export class Secrets {
  private readonly store: Store;
  private readonly keyring: () => Keyring;
  private readonly quotas: Quotas;

  constructor(store: Store, keyring: () => Keyring, quotas: Quotas = NO_QUOTAS) {
    this.store = store;
    this.keyring = keyring;
    this.quotas = quotas;
  }

  /** Sets the caller's secret `name` to `value`, creating it (within the quota) or replacing its value. */
  async put(caller: Caller, name: string, value: string): Promise<{ secret: SecretRecord; created: boolean }> {
    const keyring = this.keyring();
    const at = now();
    return this.store.transaction(async (tx) => {
      await tx.accounts.lock(caller.accountId);
      const existing = await tx.secrets.find(caller.accountId, name);
      if (existing) {
        await tx.secrets.replace(existing.id, keyring.seal(value, sealedContext(SECRET_VALUES, existing.id)), at);
        return { secret: { ...existing, updatedAt: at }, created: false };
      }
      const problem = secretsQuotaExceeded(await tx.secrets.count(caller.accountId), this.quotas);
      if (problem) throw problem;
      const secret: SecretRecord = { id: newId(), ownerId: caller.accountId, name, createdAt: at, updatedAt: at };
      await tx.secrets.insert({ ...secret, sealedValue: keyring.seal(value, sealedContext(SECRET_VALUES, secret.id)) });
      return { secret, created: true };
    });
  }

  /** The caller's own secrets, newest first, never their values. */
  list(caller: Caller, limit: number, before?: number): Promise<Page<SecretRecord>> {
    return this.store.secrets.list(caller.accountId, limit, before);
  }

  async delete(caller: Caller, name: string): Promise<void> {
    const deleted = await this.store.transaction((tx) => tx.secrets.delete(caller.accountId, name));
    if (!deleted) throw new DomainError('not-found', `You have no secret named ${name}.`);
  }

  /**
   * The template as the account named `accountName` launches it (platform keys only): its env references replaced by
   * that account's secrets — not the owner's — and the registry credentials when that account owns the template. A
   * template the account may not use is a 404; secrets it lacks, a 422 naming each; with `revision`, a template at
   * another revision (changed since the user saw it) a 412.
   */
  async resolve(caller: Caller, templateId: string, accountName: string, revision?: number): Promise<ResolvedTemplate> {
    if (caller.role !== 'platform') throw forbidden('Only platform keys resolve templates for a launch.');
    const account = await this.store.accounts.findByName(accountName);
    if (!account) {
      throw invalid(`There is no account named ${JSON.stringify(accountName)}.`, [
        { path: '/account', message: 'is not the name of an account' },
      ]);
    }
    const launcher: Caller = { accountId: account.id, role: account.role, keyId: '', access: 'read' };
    const record = await this.store.templates.find(templateId);
    if (!record || !isVisible(widestVisibility(launcher), { ...record, bound: record.endpointId !== null })) throw notFound('template');
    if (revision !== undefined && record.revision !== revision) {
      throw new DomainError(
        'precondition-failed',
        `The template is at revision ${record.revision}, not ${revision} as asked: it changed since; show it to the user again.`,
      );
    }
    const keyring = this.keyring();
    const values = new Map<string, string>();
    for (const secret of await this.store.secrets.findSealed(account.id, referencedNames(record.env))) {
      values.set(secret.name, keyring.open(secret.sealedValue, sealedContext(SECRET_VALUES, secret.id)));
    }
    const { ownerId, endpointId, ...template } = record;
    const resolved = { ...template, env: resolveEnv(record.env, values) };
    let containerRegistryCredentials: RegistryAuthCredentials | null = null;
    if (record.containerRegistryAuthId !== '' && ownerId === account.id) {
      const auth = await this.store.registryAuths.findSealed(record.containerRegistryAuthId);
      // Only an auth of the template's owner: a row naming another's (written around the API) hands out nothing.
      if (auth && auth.ownerId === ownerId) {
        const password = keyring.open(auth.sealedPassword, sealedContext(REGISTRY_AUTH_PASSWORDS, auth.id));
        containerRegistryCredentials = { username: auth.username, password };
      }
    }
    const imageDigest = (await this.store.templates.findRevision(record.id, record.revision))?.imageDigest ?? null;
    return { template: resolved, containerRegistryCredentials, imageDigest };
  }
}
