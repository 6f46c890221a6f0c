import { sql } from 'kysely';
import {
  type Access,
  type AccountRecord,
  type ApiKeyInfo,
  type ApiKeyRecord,
  type Principal,
  type Role,
  roleMismatch,
} from '../domain/account.ts';
import { fold } from '../domain/name.ts';
import type { AccountUsage } from '../domain/quota.ts';
import { type Core, Statement } from './core.ts';

// Accounts and their API keys: one aggregate, one repository. Keys are kept as SHA-256 digests only.

const FIND_PRINCIPAL = new Statement((db, digest: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select([
      'api_keys.id as keyId',
      'accounts.id as accountId',
      'accounts.name as accountName',
      'accounts.role as role',
      'api_keys.digest as digest',
      'api_keys.revoked_at as revokedAt',
      'api_keys.access as access',
      'api_keys.expires_at as expiresAt',
    ])
    .where('api_keys.digest', '=', digest),
);

/** A key of an account, as the account's list shows it. */
export interface AccountKey {
  id: string;
  label: string;
  access: Access;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/** What the root store may do with accounts: read. Writes are a transaction's (store.ts). */
export type AccountReads = Pick<
  AccountRepository,
  'nameOf' | 'findPrincipal' | 'listKeys' | 'findKey' | 'usage' | 'findByName' | 'countKeys' | 'keysOf'
>;

export class AccountRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  /** The account named `account.name`, created if there is none; a conflict if it exists with another role. */
  async ensure(account: AccountRecord): Promise<{ id: string; role: Role }> {
    const key = fold(account.name);
    await this.core.db
      .insertInto('accounts')
      .values({ id: account.id, name: account.name, name_key: key, role: account.role, created_at: account.createdAt })
      .onConflict((oc) => oc.column('name_key').doNothing())
      .execute();
    const row = await this.core.db.selectFrom('accounts').select(['id', 'role']).where('name_key', '=', key).executeTakeFirstOrThrow();
    if (row.role !== account.role) throw roleMismatch(account.name, row.role);
    return row;
  }

  /** Makes the account; false when one of that name (compared as names are: `fold`) exists already. */
  async insert(account: AccountRecord): Promise<boolean> {
    const made = await this.core.db
      .insertInto('accounts')
      .values({ id: account.id, name: account.name, name_key: fold(account.name), role: account.role, created_at: account.createdAt })
      .onConflict((oc) => oc.column('name_key').doNothing())
      .returning('id')
      .execute();
    return made.length > 0;
  }

  /** The name of account `id` (account names never change). */
  async nameOf(id: string): Promise<string | undefined> {
    const row = await this.core.db.selectFrom('accounts').select('name').where('id', '=', id).executeTakeFirst();
    return row?.name;
  }

  async insertKey(key: ApiKeyRecord): Promise<void> {
    await this.core.db
      .insertInto('api_keys')
      .values({
        id: key.id,
        account_id: key.accountId,
        digest: key.digest,
        prefix: key.prefix,
        created_at: key.createdAt,
        label: key.label,
        access: key.access,
        expires_at: key.expiresAt,
      })
      .execute();
  }

  /** The caller a key digest stands for, through the read cache (which keeps only keys that exist). */
  findPrincipal(digest: string): Promise<Principal | undefined> {
    const cache = this.core.cache;
    return cache ? cache.principal(digest, () => this.readPrincipal(digest)) : this.readPrincipal(digest);
  }

  private async readPrincipal(digest: string): Promise<Principal | undefined> {
    const [row] = await this.core.run(FIND_PRINCIPAL, digest);
    return row;
  }

  async listKeys(): Promise<ApiKeyInfo[]> {
    return this.core.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select([
        'api_keys.id as id',
        'accounts.name as account',
        'accounts.role as role',
        'api_keys.prefix as prefix',
        'api_keys.created_at as createdAt',
        'api_keys.revoked_at as revokedAt',
        'api_keys.label as label',
        'api_keys.access as access',
        'api_keys.expires_at as expiresAt',
      ])
      .orderBy('api_keys.created_at')
      .orderBy('api_keys.id')
      .execute();
  }

  /** The account's keys that are not revoked, oldest first, with when each was last used. */
  async keysOf(accountId: string): Promise<AccountKey[]> {
    return this.core.db
      .selectFrom('api_keys')
      .leftJoin('api_key_uses', 'api_key_uses.key_id', 'api_keys.id')
      .select([
        'api_keys.id as id',
        'api_keys.label as label',
        'api_keys.access as access',
        'api_keys.created_at as createdAt',
        'api_keys.expires_at as expiresAt',
        'api_key_uses.last_used_at as lastUsedAt',
      ])
      .where('api_keys.account_id', '=', accountId)
      .where('api_keys.revoked_at', 'is', null)
      .orderBy('api_keys.created_at')
      .orderBy('api_keys.id')
      .execute();
  }

  /** The key with that id and its account, as `GET /me` shows them. */
  async findKey(id: string): Promise<(ApiKeyInfo & { accountId: string }) | undefined> {
    return this.core.db
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select([
        'api_keys.id as id',
        'accounts.id as accountId',
        'accounts.name as account',
        'accounts.role as role',
        'api_keys.prefix as prefix',
        'api_keys.created_at as createdAt',
        'api_keys.revoked_at as revokedAt',
        'api_keys.label as label',
        'api_keys.access as access',
        'api_keys.expires_at as expiresAt',
      ])
      .where('api_keys.id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Revokes a key that is not revoked yet (of account `accountId` only, when given); false when there is no such
   * active key. The key's row changes, so every process's read cache forgets it (change-names.ts).
   */
  async revokeKey(id: string, at: string, accountId?: string): Promise<boolean> {
    let query = this.core.db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null);
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    const revoked = await query.returning('digest').execute();
    return revoked.length > 0;
  }

  /**
   * Holds the account's usage row (PostgreSQL: made if missing, then FOR UPDATE) until the transaction ends, so that
   * what a write reads of the account's use before and after it is its own doing: the account's writes that count
   * take turns, as the triggers' update of that row would make them anyway. SQLite runs one writer at a time.
   */
  async lockUsage(accountId: string): Promise<void> {
    this.core.requireTransaction("Locking an account's usage");
    if (!this.core.locksRows) return;
    await sql`insert into account_usage (account_id) values (${accountId}) on conflict (account_id) do nothing`.execute(this.core.db);
    await this.core.db.selectFrom('account_usage').select('account_id').where('account_id', '=', accountId).forUpdate().execute();
  }

  /** Notes that keys were used at `at`: the time moves forward only. */
  async noteUses(keyIds: string[], at: string): Promise<void> {
    if (keyIds.length === 0) return;
    await this.core.db
      .insertInto('api_key_uses')
      .values(keyIds.map((key_id) => ({ key_id, last_used_at: at })))
      .onConflict((oc) => oc.column('key_id').doUpdateSet({ last_used_at: at }).where('api_key_uses.last_used_at', '<', at))
      .execute();
  }

  /** What the account holds, as the database's triggers keep it (migration 0005). */
  async usage(accountId: string): Promise<AccountUsage> {
    const row = await this.core.db
      .selectFrom('account_usage')
      .select(['templates', 'template_bytes', 'endpoints', 'registry_auths', 'history_bytes', 'stored_responses'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return {
      templates: Number(row?.templates ?? 0),
      templateBytes: Number(row?.template_bytes ?? 0),
      endpoints: Number(row?.endpoints ?? 0),
      registryAuths: Number(row?.registry_auths ?? 0),
      historyBytes: Number(row?.history_bytes ?? 0),
      storedResponses: Number(row?.stored_responses ?? 0),
    };
  }

  /** The account named `name` (compared as names are: `fold`), as `podplate keys create --user` named it. */
  async findByName(name: string): Promise<{ id: string; role: Role; createdAt: string } | undefined> {
    return this.core.db
      .selectFrom('accounts')
      .select(['id', 'role', 'created_at as createdAt'])
      .where('name_key', '=', fold(name))
      .executeTakeFirst();
  }

  /**
   * Holds the account's row (FOR UPDATE on PostgreSQL) until the transaction ends: one account's writes that count what
   * it holds (its secrets, against their quota) take turns. SQLite runs one writing transaction at a time.
   */
  async lock(accountId: string): Promise<void> {
    this.core.requireTransaction('Locking an account');
    if (this.core.locksRows) await this.core.db.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
  }

  /** How many keys the account holds that are active, or ended (revoked or expired) since `endedSince`: the quota's count. */
  async countKeysOf(accountId: string, endedSince: string): Promise<number> {
    const row = await this.core.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', accountId)
      .where((eb) => eb.or([eb('revoked_at', 'is', null), eb('revoked_at', '>=', endedSince)]))
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>=', endedSince)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Forgets at most `limit` keys revoked or expired before `at`, and their noted uses; how many. Such a key is refused
   * either way: once forgotten, as unknown. A key that a revision names is kept while the revision is, so that history
   * names its author (revisions are bounded per template, so these are too).
   */
  async forgetEndedKeys(at: string, limit: number): Promise<number> {
    this.core.requireTransaction('Forgetting keys');
    const ended = (
      await this.core.db
        .selectFrom('api_keys')
        .select('id')
        .where((eb) => eb.or([eb('revoked_at', '<', at), eb('expires_at', '<', at)]))
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('template_revisions').select('key_id').whereRef('template_revisions.key_id', '=', 'api_keys.id'))),
        )
        .limit(limit)
        .execute()
    ).map((row) => row.id);
    if (ended.length === 0) return 0;
    await this.core.db.deleteFrom('api_key_uses').where('key_id', 'in', ended).execute();
    await this.core.db.deleteFrom('api_keys').where('id', 'in', ended).execute();
    return ended.length;
  }

  async countKeys(): Promise<number> {
    const row = await this.core.db
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
