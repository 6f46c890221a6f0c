import { DomainError } from './errors.ts';

// Accounts and their API keys. A key belongs to one account and acts with the account's role.

export type Role = 'user' | 'platform';

/** Account names, as `podplate keys create --user` takes them. */
export const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;
export const ACCOUNT_NAME_RULE = 'account names are 1 to 128 letters, digits, ".", "_", "@" or "-", starting with a letter or digit';

export interface AccountRecord {
  id: string;
  name: string;
  role: Role;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  /** SHA-256 of the key, hex: the only form in which a key is kept. */
  digest: string;
  /** The key's first characters, to tell keys apart in a list. */
  prefix: string;
  createdAt: string;
}

/** The account behind a key, as authentication needs it. */
export interface Principal {
  keyId: string;
  accountId: string;
  accountName: string;
  role: Role;
  digest: string;
  revokedAt: string | null;
}

/** A key as listed: never its secret or digest. */
export interface ApiKeyInfo {
  id: string;
  account: string;
  role: Role;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

export const roleMismatch = (account: string, role: Role) =>
  new DomainError('conflict', `account ${account} has role ${role}; a key takes the role of its account`);
