import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Role } from '../domain/visibility.ts';
import { RoleMismatch, type Store } from '../store/store.ts';
import { newId, now } from './ids.ts';

export const KEY_PREFIX = 'pp_';

/** The SHA-256 digest of a key, the only form in which a key is stored. */
export const digestOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');

export const sameDigest = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export interface CreatedKey {
  id: string;
  account: string;
  role: Role;
  /** The key itself: shown once, never stored. */
  secret: string;
}

export class KeyError extends Error {}

export async function createApiKey(store: Store, account: string, role: Role): Promise<CreatedKey> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/.test(account)) {
    throw new KeyError('account names are 1 to 128 letters, digits, ".", "_", "@" or "-", starting with a letter or digit');
  }
  const secret = KEY_PREFIX + randomBytes(32).toString('base64url');
  const id = newId('key_');
  try {
    await store.transaction(async (tx) => {
      const owner = await tx.ensureAccount({ id: newId('acc_'), name: account, role, createdAt: now() });
      await tx.insertApiKey({ id, accountId: owner.id, digest: digestOf(secret), prefix: secret.slice(0, 7), createdAt: now() });
    });
  } catch (error) {
    if (error instanceof RoleMismatch) throw new KeyError(`${error.message}; a key takes the role of its account`);
    throw error;
  }
  return { id, account, role, secret };
}

/** On first start, with no key at all, the platform gets one so that somebody can sign in. */
export async function bootstrapKey(store: Store): Promise<CreatedKey | undefined> {
  if ((await store.countApiKeys()) > 0) return undefined;
  return createApiKey(store, 'platform', 'platform');
}
