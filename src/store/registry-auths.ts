import type { Selectable } from 'kysely';
import { fold } from '../domain/name.ts';
import type { Page } from '../domain/page.ts';
import { type RegistryAuthRecord, registryAuthNameTaken, type SealedRegistryAuth } from '../domain/registry-auth.ts';
import { type Core, page } from './core.ts';
import type { RegistryAuthsTable } from './schema.ts';

// Container registry auths: one aggregate, one repository. The password column holds only sealed values.

const SHOWN_COLUMNS = ['seq', 'id', 'owner_id', 'name', 'username', 'created_at'] as const;
type ShownRow = Pick<Selectable<RegistryAuthsTable>, (typeof SHOWN_COLUMNS)[number]>;

/** What the root store may do with registry auths: read. Writes are a transaction's (store.ts). */
export type RegistryAuthReads = Pick<RegistryAuthRepository, 'find' | 'findSealed' | 'list'>;

export class RegistryAuthRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  async insert(auth: SealedRegistryAuth): Promise<void> {
    await this.core.unique(
      this.core.db
        .insertInto('registry_auths')
        .values({
          id: auth.id,
          owner_id: auth.ownerId,
          name: auth.name,
          name_key: fold(auth.name),
          username: auth.username,
          password: auth.sealedPassword,
          created_at: auth.createdAt,
        })
        .execute(),
      registryAuthNameTaken,
    );
  }

  /** The auth, without its password. */
  async find(id: string): Promise<RegistryAuthRecord | undefined> {
    const row = await this.core.db.selectFrom('registry_auths').select(SHOWN_COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** The auth with its sealed password. */
  async findSealed(id: string): Promise<SealedRegistryAuth | undefined> {
    const row = await this.core.db
      .selectFrom('registry_auths')
      .select([...SHOWN_COLUMNS, 'password'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row && { ...toRecord(row), sealedPassword: row.password };
  }

  /** The owner's auths, newest first. */
  async list(ownerId: string, limit: number, before?: number): Promise<Page<RegistryAuthRecord>> {
    let select = this.core.db.selectFrom('registry_auths').select(SHOWN_COLUMNS).where('owner_id', '=', ownerId);
    if (before !== undefined) select = select.where('seq', '<', before);
    const rows = await select
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    return page(rows, limit, (row) => row.seq, toRecord);
  }

  /**
   * Whether `id` names an auth of `ownerId`, for a template about to refer to it. On PostgreSQL the auth's row is then
   * held (FOR KEY SHARE) until the transaction ends: a delete, which locks it FOR UPDATE first, waits, and then sees the
   * template. (SQLite runs one writing transaction at a time.)
   */
  async holdOwned(id: string, ownerId: string): Promise<boolean> {
    this.core.requireTransaction('Holding a registry auth for a template');
    const select = this.core.db.selectFrom('registry_auths').select('id').where('id', '=', id).where('owner_id', '=', ownerId);
    const row = await (this.core.locksRows ? select.forKeyShare() : select).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Whether `id` names an auth of `ownerId`, locked for deletion (FOR UPDATE on PostgreSQL) until the transaction ends:
   * a template write that would refer to it waits, and then finds it gone.
   */
  async lockOwned(id: string, ownerId: string): Promise<boolean> {
    this.core.requireTransaction('Locking a registry auth');
    const select = this.core.db.selectFrom('registry_auths').select('id').where('id', '=', id).where('owner_id', '=', ownerId);
    const row = await (this.core.locksRows ? select.forUpdate() : select).executeTakeFirst();
    return row !== undefined;
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.core.db.deleteFrom('registry_auths').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

function toRecord(row: ShownRow): RegistryAuthRecord {
  return { id: row.id, ownerId: row.owner_id, name: row.name, username: row.username, createdAt: row.created_at };
}
