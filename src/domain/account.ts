import { type Static, Type } from '@sinclair/typebox';
import { DomainError, type FieldError, invalid } from './errors.ts';
import { PLAIN_LABEL } from './text.ts';

// Accounts and their API keys. A key belongs to one account, acts with the account's role, and may be read-only or
// expire.

export type Role = 'user' | 'platform';

/** What a key may do: everything its role allows, or only read (every write is a 403). */
export type Access = 'read-write' | 'read';
export const ACCESS: readonly Access[] = ['read-write', 'read'];

/** Account names, as `podplate keys create --user` and `POST /v1/accounts` take them. */
const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;
export const ACCOUNT_NAME_RULE = 'account names are 1 to 128 letters, digits, ".", "_", "@" or "-", starting with a letter or digit';

/**
 * The one check of an account name, wherever one arrives (a body, a path, the CLI): the name as accounts are compared
 * by (today exactly as given), or a 400 naming `path`.
 */
export function accountName(name: string, at: Omit<FieldError, 'message'> = { path: '/name' }): string {
  if (!ACCOUNT_NAME.test(name))
    throw invalid(`The account name is not valid: ${ACCOUNT_NAME_RULE}.`, [{ ...at, message: ACCOUNT_NAME_RULE }]);
  return name;
}

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
  label: string;
  access: Access;
  expiresAt: string | null;
}

/** The account behind a key, as authentication needs it. */
export interface Principal {
  keyId: string;
  accountId: string;
  accountName: string;
  role: Role;
  digest: string;
  revokedAt: string | null;
  access: Access;
  expiresAt: string | null;
}

/** A key as the admin's `podplate keys list` shows it: never its secret or digest. */
export interface ApiKeyInfo {
  id: string;
  account: string;
  role: Role;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  label: string;
  access: Access;
  expiresAt: string | null;
}

export const roleMismatch = (account: string, role: Role) =>
  new DomainError('conflict', `account ${account} has role ${role}; a key takes the role of its account`);

const RoleSchema = Type.Union([Type.Literal('user'), Type.Literal('platform')], {
  description: '`user`, or `platform`: the platform’s own account, whose templates are official and which provisions the others.',
});
const AccessSchema = Type.Union([Type.Literal('read-write'), Type.Literal('read')], {
  description: '`read-write`: everything the account’s role allows; `read`: reads only, every write is a 403.',
});
const timestamp = (description: string) => Type.String({ format: 'date-time', description });
const nullableTimestamp = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

/** `POST /v1/accounts`. */
export const AccountCreate = Type.Object(
  {
    name: Type.String({ maxLength: 128, description: `The account's name, unique: ${ACCOUNT_NAME_RULE}.`, examples: ['alice'] }),
    role: Type.Optional({ ...RoleSchema, default: 'user' }),
  },
  { $id: 'AccountCreateInput', title: 'AccountCreateInput', additionalProperties: false },
);
export type AccountCreate = Static<typeof AccountCreate>;

export const Account = Type.Object(
  {
    name: Type.String({ description: 'The account’s name.' }),
    role: RoleSchema,
    createdAt: timestamp('When the account was made.'),
  },
  { $id: 'Account', title: 'Account', additionalProperties: false },
);
export type Account = Static<typeof Account>;

export const LABEL_MAX = 200;

/** `POST /v1/accounts/{name}/keys`. */
export const ApiKeyCreate = Type.Object(
  {
    label: Type.Optional(
      Type.String({
        maxLength: LABEL_MAX,
        pattern: PLAIN_LABEL,
        errorMessage: 'must not contain control characters or characters that change the direction of text',
        description: 'What the key is for, to tell keys apart (`""` by default).',
        examples: ['ci'],
      }),
    ),
    expiresAt: Type.Optional(
      timestamp(
        'When the key stops working (ISO 8601, in the future); absent, it does not expire — unless the caller’s own key ' +
          'expires, whose expiry is then the latest a key it makes may have.',
      ),
    ),
    access: Type.Optional({ ...AccessSchema, default: 'read-write' }),
  },
  { $id: 'ApiKeyCreateInput', title: 'ApiKeyCreateInput', additionalProperties: false },
);
export type ApiKeyCreate = Static<typeof ApiKeyCreate>;

const keyFields = {
  id: Type.String({ description: 'The key’s id, to revoke it by (`key_…`): not the key.' }),
  label: Type.String({ description: 'What the key is for.' }),
  access: AccessSchema,
  createdAt: timestamp('When the key was made.'),
  expiresAt: nullableTimestamp('When the key stops working; `null`: never.'),
};

/** A key as its account's list shows it: never the key itself. */
export const ApiKey = Type.Object(
  { ...keyFields, lastUsedAt: nullableTimestamp('When the key was last used, to the minute; `null`: never.') },
  { $id: 'ApiKey', title: 'ApiKey', additionalProperties: false },
);
export type ApiKey = Static<typeof ApiKey>;

/** A key as its create answers: the key itself, shown this once. */
export const CreatedApiKey = Type.Object(
  { ...keyFields, key: Type.String({ description: 'The key (`pp_…`): shown in this answer only, never again.' }) },
  { $id: 'CreatedApiKey', title: 'CreatedApiKey', additionalProperties: false },
);
export type CreatedApiKey = Static<typeof CreatedApiKey>;

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
    keyAccess: AccessSchema,
    keyExpiresAt: nullableTimestamp('When the key stops working; `null`: never.'),
  },
  { $id: 'Me', title: 'Me', additionalProperties: false },
);
export type Me = Static<typeof Me>;
