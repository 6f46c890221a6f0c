import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ACCOUNT_NAME, ACCOUNT_NAME_RULE, type ApiKeyInfo, type Me, type Role } from '../domain/account.ts';
import { DomainError, invalid, RateLimited } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { now } from '../domain/time.ts';
import type { Caller } from '../domain/visibility.ts';
import type { Store } from '../store/store.ts';
import type { Limits } from './limits.ts';

// Use cases of API keys: authenticate, create, list, revoke, and the first platform key.

export const KEY_PREFIX = 'pp_';

/** The SHA-256 digest of a key, the only form in which a key is stored. */
export const digestOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');

const sameDigest = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export interface CreatedKey {
  id: string;
  account: string;
  role: Role;
  /** The key itself: shown once, never stored. */
  secret: string;
}

const unauthenticated = (detail: string) => new DomainError('unauthenticated', detail);

/**
 * API keys: made by operators, resolved to a caller on every request. The store's read cache keeps the keys found
 * (never those not found, so guesses can't push real keys out) until the database says they changed, so a key revoked
 * anywhere (another process, the CLI, SQL) is refused by every process as soon as it hears so (store/read-cache.ts).
 * Failed authentications are counted per client address: past `failuresPerMinute`, an address's failures are answered
 * 429, while its valid keys go on working.
 */
export class Keys {
  private readonly store: Store;
  private readonly limits: Limits;
  private readonly failuresPerMinute: number;

  constructor(store: Store, limits: Limits, failuresPerMinute: number) {
    this.store = store;
    this.limits = limits;
    this.failuresPerMinute = failuresPerMinute;
  }

  /** The caller a key stands for; unauthenticated (or rate-limited) when the key is unknown or revoked. */
  async authenticate(secret: string, address: string): Promise<Caller> {
    const digest = digestOf(secret);
    const principal = await this.store.accounts.findPrincipal(digest);
    if (!principal || !sameDigest(principal.digest, digest)) throw await this.refused(address, 'The API key is not valid.');
    if (principal.revokedAt !== null) throw await this.refused(address, 'The API key has been revoked.');
    return { accountId: principal.accountId, role: principal.role, keyId: principal.keyId };
  }

  /** What a failed authentication from `address` gets: a 401, or a 429 once the address has failed too often. */
  async refused(address: string, detail: string): Promise<DomainError> {
    if (this.failuresPerMinute > 0) {
      const waitMs = await this.limits.take(`auth-failures ${address}`, this.failuresPerMinute);
      if (waitMs > 0) {
        return new RateLimited(
          `More than ${this.failuresPerMinute} failed authentications came from this address in a minute; retry after the time in Retry-After.`,
          Math.ceil(waitMs / 1000),
        );
      }
    }
    return unauthenticated(detail);
  }

  /** Keys currently cached (only keys that exist are). */
  get cached(): number {
    return this.store.figures().cache.keys.entries;
  }

  /** A new key for `account` (created on first use, with `role`); its secret is in the answer and nowhere else. */
  async create(account: string, role: Role): Promise<CreatedKey> {
    if (!ACCOUNT_NAME.test(account)) throw invalid(ACCOUNT_NAME_RULE, [{ path: '/account', message: ACCOUNT_NAME_RULE }]);
    const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
    const id = newId('key_');
    await this.store.transaction(async (tx) => {
      const owner = await tx.accounts.ensure({ id: newId('acc_'), name: account, role, createdAt: now() });
      await tx.accounts.insertKey({ id, accountId: owner.id, digest: digestOf(secret), prefix: secret.slice(0, 7), createdAt: now() });
    });
    return { id, account, role, secret };
  }

  /** Who the caller is: its account and the key it used. */
  async whoami(caller: Caller): Promise<Me> {
    const key = await this.store.accounts.findKey(caller.keyId);
    if (!key) throw unauthenticated('The API key is not valid.');
    return {
      accountId: key.accountId,
      accountName: key.account,
      role: key.role,
      isPlatform: key.role === 'platform',
      keyId: key.id,
      keyPrefix: key.prefix,
      keyCreatedAt: key.createdAt,
    };
  }

  list(): Promise<ApiKeyInfo[]> {
    return this.store.accounts.listKeys();
  }

  /** Revokes an active key; false when there is none with that id. */
  revoke(id: string): Promise<boolean> {
    return this.store.transaction((tx) => tx.accounts.revokeKey(id, now()));
  }

  /** On first start, with no key at all, the platform gets one so that somebody can sign in. */
  async bootstrap(): Promise<CreatedKey | undefined> {
    if ((await this.store.accounts.countKeys()) > 0) return undefined;
    return this.create('platform', 'platform');
  }
}
