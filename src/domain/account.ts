import { type Static, Type } from '@sinclair/typebox';
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

/** The caller as `GET /v1/me` shows it: its account and the key it used. */
export const Me = Type.Object(
  {
    accountId: Type.String({ description: 'The id of the caller’s account.' }),
    accountName: Type.String({ description: 'The name of the caller’s account.' }),
    role: Type.Union([Type.Literal('user'), Type.Literal('platform')], { description: 'The role the key acts with.' }),
    isPlatform: Type.Boolean({ description: 'Whether the key is a platform key: its templates are official.' }),
    keyId: Type.String({ description: 'The id of the API key the request used (as revisions record it).' }),
    keyPrefix: Type.String({ description: 'The first characters of the key, to tell keys apart.' }),
    keyCreatedAt: Type.String({ format: 'date-time', description: 'When the key was made.' }),
  },
  { $id: 'Me', title: 'Me', additionalProperties: false },
);
export type Me = Static<typeof Me>;
