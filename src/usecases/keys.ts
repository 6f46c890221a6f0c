import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  type Access,
  type ApiKey,
  type ApiKeyCreate,
  type ApiKeyInfo,
  type ApiKeyRecord,
  accountName,
  type CreatedApiKey,
  type Me,
  type Role,
} from '../domain/account.ts';
import { conflict, DomainError, forbidden, invalid, RateLimited } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { apiKeysQuotaExceeded, KEYS_FORGOTTEN_AFTER_DAYS, type Quotas } from '../domain/quota.ts';
import { now } from '../domain/time.ts';
import type { Caller } from '../domain/visibility.ts';
import type { Store } from '../store/store.ts';
import { type Answer, type KeptAs, type Once, once } from './idempotency.ts';
import type { Limits } from './limits.ts';

// Use cases of API keys: authenticate, create (by an operator, or over the API), list, revoke, the first platform key.

export const KEY_PREFIX = 'pp_';

/** The SHA-256 digest of a key, the only form in which a key is stored. */
export const digestOf = (secret: string): string => hash('sha256', secret, 'hex');

const sameDigest = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export interface CreatedKey {
  id: string;
  account: string;
  role: Role;
  /** The key itself: shown once, never stored. */
  secret: string;
}

/** What a key is made with, beyond its account. */
export interface KeyOptions {
  label?: string;
  access?: Access;
  expiresAt?: string | null;
}

/** A key's use is written at most this often per key and process: `lastUsedAt` is to the minute. */
export const USE_NOTED_EVERY_MS = 60_000;

const unauthenticated = (detail: string) => new DomainError('unauthenticated', detail);
const noAccount = (name: string) => new DomainError('not-found', `No account named ${JSON.stringify(name)} is visible to this key.`);

/**
 * API keys: made by operators or over the API, resolved to a caller on every request. The store's read cache keeps
 * the keys found (never those not found, so guesses can't push real keys out) until the database says they changed,
 * so a key revoked anywhere (another process, the CLI, SQL) is refused by every process as soon as it hears so
 * (store/read-cache.ts). Failed authentications are counted per client address: past `failuresPerMinute`, an
 * address's failures are answered 429, while its valid keys go on working.
 */
/**
 * A key made with an Idempotency-Key: a retry makes no second key, but gets no key either, since only its digest is
 * kept. It is told which key the first request made, so that it can revoke it if that answer was lost.
 */
const KEPT_KEY: KeptAs<CreatedApiKey> = {
  reference: (created) => created.id,
  rebuild: async () => undefined,
  lost: (id) =>
    conflict(
      `This Idempotency-Key's request made key ${id}, which is shown only in its first answer and never kept. If that ` +
        'answer was lost, revoke the key and make another with a new Idempotency-Key.',
      [{ in: 'header', path: '/idempotency-key', message: `made key ${id}, which can't be shown again` }],
    ),
};

export class Keys {
  private readonly store: Store;
  private readonly limits: Limits;
  private readonly failuresPerMinute: number;
  private readonly quotas: Quotas;
  /** When this process last noted each key's use, and the uses waiting to be written (in one statement). */
  private readonly noted = new Map<string, number>();
  private readonly unwritten = new Set<string>();
  private scheduled = false;
  private writing: Promise<void> = Promise.resolve();

  constructor(store: Store, limits: Limits, failuresPerMinute: number, quotas: Quotas) {
    this.store = store;
    this.limits = limits;
    this.failuresPerMinute = failuresPerMinute;
    this.quotas = quotas;
  }

  /** The caller a key stands for; unauthenticated (or rate-limited) when the key is unknown, revoked or expired. */
  async authenticate(secret: string, address: string): Promise<Caller & { accountName: string }> {
    const digest = digestOf(secret);
    const principal = await this.store.accounts.findPrincipal(digest);
    if (!principal || !sameDigest(principal.digest, digest)) throw await this.refused(address, 'The API key is not valid.');
    if (principal.revokedAt !== null) throw await this.refused(address, 'The API key has been revoked.');
    if (principal.expiresAt !== null && principal.expiresAt <= now()) {
      throw await this.refused(address, `The API key expired at ${principal.expiresAt}; ask for a new one.`);
    }
    this.noteUse(principal.keyId);
    return {
      accountId: principal.accountId,
      accountName: principal.accountName,
      role: principal.role,
      keyId: principal.keyId,
      access: principal.access,
    };
  }

  /**
   * Notes that a key was used, for `lastUsedAt`: at most once a minute per key and process, written after the request's
   * own work, outside its transaction, the uses of that moment in one statement. A use that can't be written (the
   * database is away) is not retried: the next one a minute later will be.
   */
  private noteUse(keyId: string): void {
    const at = Date.now();
    if (at - (this.noted.get(keyId) ?? 0) < USE_NOTED_EVERY_MS) return;
    this.noted.set(keyId, at);
    if (this.noted.size > 100_000) for (const [id, when] of this.noted) if (at - when >= USE_NOTED_EVERY_MS) this.noted.delete(id);
    this.unwritten.add(keyId);
    if (this.scheduled) return;
    this.scheduled = true;
    const write = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      this.scheduled = false;
      const ids = [...this.unwritten];
      this.unwritten.clear();
      await this.store.transaction((tx) => tx.accounts.noteUses(ids, now())).catch(() => undefined);
    });
    this.writing = Promise.all([this.writing, write]).then(() => undefined);
  }

  /** Resolves once the uses noted so far are written (tests, and a clean shutdown). */
  usesWritten(): Promise<void> {
    return this.writing;
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

  /**
   * A new key for `account` (made on first use, with `role`), as the operator's `podplate keys create` makes it; its
   * secret is in the answer and nowhere else.
   */
  async create(account: string, role: Role, options: KeyOptions = {}): Promise<CreatedKey> {
    const name = accountName(account, { path: '/account' });
    const key = newKey(options);
    await this.store.transaction(async (tx) => {
      const owner = await tx.accounts.ensure({ id: newId('acc_'), name, role, createdAt: key.record.createdAt });
      await tx.accounts.insertKey({ ...key.record, accountId: owner.id });
    });
    return { id: key.record.id, account: name, role, secret: key.secret };
  }

  /**
   * `POST /v1/accounts/{account}/keys`: a platform key makes keys for any account; a user key for its own only (another
   * account is a 404), never with more access than its own, nor outliving it; within the account's quota of keys (an
   * operator's `podplate keys create` is not held to it).
   */
  async createFor(caller: Caller, name: string, input: ApiKeyCreate, request?: Once<CreatedApiKey>): Promise<Answer<CreatedApiKey>> {
    const account = await this.visibleAccount(caller, name);
    if (caller.access === 'read') throw forbidden('This API key is read-only: it may not make keys.');
    let expiresAt = input.expiresAt === undefined ? null : new Date(input.expiresAt).toISOString();
    if (expiresAt !== null && expiresAt <= now()) {
      throw invalid('The key would have expired already.', [{ path: '/expiresAt', message: 'must be in the future' }]);
    }
    if (caller.role !== 'platform') {
      const own = await this.store.accounts.findKey(caller.keyId);
      if (own?.expiresAt && (expiresAt === null || expiresAt > own.expiresAt)) {
        if (input.expiresAt !== undefined) {
          throw invalid(`A key made by a key that expires may not outlive it: at the latest ${own.expiresAt}.`, [
            { path: '/expiresAt', message: `must be no later than ${own.expiresAt}, when this key expires` },
          ]);
        }
        expiresAt = own.expiresAt;
      }
    }
    const key = newKey({ label: input.label, access: input.access, expiresAt });
    return once(this.store, caller.accountId, request, KEPT_KEY, this.quotas, async (tx) => {
      // The account's key creates take turns under its lock, so concurrent ones never pass the quota together.
      await tx.accounts.lock(account.id);
      const endedSince = new Date(Date.now() - KEYS_FORGOTTEN_AFTER_DAYS * 24 * 60 * 60 * 1000).toISOString();
      const problem = apiKeysQuotaExceeded(await tx.accounts.countKeysOf(account.id, endedSince), this.quotas);
      if (problem) throw problem;
      await tx.accounts.insertKey({ ...key.record, accountId: account.id });
      const { record } = key;
      return { id: record.id, key: key.secret, label: record.label, access: record.access, createdAt: record.createdAt, expiresAt };
    });
  }

  /** `GET /v1/accounts/{account}/keys`: the account's keys that are not revoked, never the keys themselves. */
  async listFor(caller: Caller, name: string): Promise<ApiKey[]> {
    const account = await this.visibleAccount(caller, name);
    return this.store.accounts.keysOf(account.id);
  }

  /** `DELETE /v1/accounts/{account}/keys/{id}`: revoked at once, in every process (as `podplate keys revoke`). */
  async revokeFor(caller: Caller, name: string, id: string): Promise<void> {
    const account = await this.visibleAccount(caller, name);
    const revoked = await this.store.transaction((tx) => tx.accounts.revokeKey(id, now(), account.id));
    if (!revoked) throw new DomainError('not-found', `Account ${name} has no active key ${id}.`);
  }

  /** The account `name` as the caller may manage its keys: any for a platform key, its own for a user key (else 404). */
  private async visibleAccount(caller: Caller, name: string): Promise<{ id: string }> {
    const wanted = accountName(name, { in: 'path', path: '/account' });
    const account = await this.store.accounts.findByName(wanted);
    if (!account || (caller.role !== 'platform' && account.id !== caller.accountId)) throw noAccount(wanted);
    return account;
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
      keyAccess: key.access,
      keyExpiresAt: key.expiresAt,
    };
  }

  list(): Promise<ApiKeyInfo[]> {
    return this.store.accounts.listKeys();
  }

  /** Revokes an active key; false when there is none with that id. */
  revoke(id: string): Promise<boolean> {
    return this.store.transaction((tx) => tx.accounts.revokeKey(id, now()));
  }

  /** Whether the install has no key at all: its first start makes the platform one. */
  async needsBootstrap(): Promise<boolean> {
    return (await this.store.accounts.countKeys()) === 0;
  }

  /** On first start, with no key at all, the platform gets one so that somebody can sign in. */
  async bootstrap(): Promise<CreatedKey | undefined> {
    if (!(await this.needsBootstrap())) return undefined;
    return this.create('platform', 'platform');
  }
}

/** A new key's secret and the record kept of it (its digest, never the key). */
function newKey(options: KeyOptions) {
  const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
  const record = {
    id: newId('key_'),
    digest: digestOf(secret),
    prefix: secret.slice(0, 7),
    createdAt: now(),
    label: options.label ?? '',
    access: options.access ?? 'read-write',
    expiresAt: options.expiresAt ?? null,
  } satisfies Omit<ApiKeyRecord, 'accountId'>;
  return { secret, record };
}
