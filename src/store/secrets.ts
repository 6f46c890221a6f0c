import type { Selectable } from 'kysely';
import type { Page } from '../domain/page.ts';
import type { SealedSecret, SecretRecord } from '../domain/secret.ts';
import { type Core, page } from './core.ts';
import type { SecretsTable } from './schema.ts';

// Accounts' secrets: one aggregate, one repository. The value column holds only sealed values.

const SHOWN_COLUMNS = ['seq', 'id', 'owner_id', 'name', 'created_at', 'updated_at'] as const;
type ShownRow = Pick<Selectable<SecretsTable>, (typeof SHOWN_COLUMNS)[number]>;
/** How many names one query looks up. */
const NAMES_PER_QUERY = 1000;

/** What the root store may do with secrets: read. Writes are a transaction's (store.ts). */
export type SecretReads = Pick<SecretRepository, 'find' | 'count' | 'findSealed' | 'list'>;

export class SecretRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  /** The owner's secret named `name`, without its value. */
  async find(ownerId: string, name: string): Promise<SecretRecord | undefined> {
    const row = await this.core.db
      .selectFrom('secrets')
      .select(SHOWN_COLUMNS)
      .where('owner_id', '=', ownerId)
      .where('name', '=', name)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** How many secrets the owner has. */
  async count(ownerId: string): Promise<number> {
    const row = await this.core.db
      .selectFrom('secrets')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('owner_id', '=', ownerId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(secret: SealedSecret): Promise<void> {
    await this.core.db
      .insertInto('secrets')
      .values({
        id: secret.id,
        owner_id: secret.ownerId,
        name: secret.name,
        value: secret.sealedValue,
        created_at: secret.createdAt,
        updated_at: secret.updatedAt,
      })
      .execute();
  }

  /** Replaces the value of the secret `id`. */
  async replace(id: string, sealedValue: string, updatedAt: string): Promise<void> {
    await this.core.db.updateTable('secrets').set({ value: sealedValue, updated_at: updatedAt }).where('id', '=', id).execute();
  }

  /**
   * The owner's secrets named in `names`, with their sealed values. A template may refer to tens of thousands: they are
   * looked up NAMES_PER_QUERY at a time, each query far below the bound values SQLite (32,766) and PostgreSQL (65,535) take.
   */
  async findSealed(ownerId: string, names: readonly string[]): Promise<SealedSecret[]> {
    const found: SealedSecret[] = [];
    for (let at = 0; at < names.length; at += NAMES_PER_QUERY) {
      const rows = await this.core.db
        .selectFrom('secrets')
        .select([...SHOWN_COLUMNS, 'value'])
        .where('owner_id', '=', ownerId)
        .where('name', 'in', names.slice(at, at + NAMES_PER_QUERY))
        .execute();
      for (const row of rows) found.push({ ...toRecord(row), sealedValue: row.value });
    }
    return found;
  }

  /** The owner's secrets, newest first. */
  async list(ownerId: string, limit: number, before?: number): Promise<Page<SecretRecord>> {
    let select = this.core.db.selectFrom('secrets').select(SHOWN_COLUMNS).where('owner_id', '=', ownerId);
    if (before !== undefined) select = select.where('seq', '<', before);
    const rows = await select
      .orderBy('seq', 'desc')
      .limit(limit + 1)
      .execute();
    return page(rows, limit, (row) => row.seq, toRecord);
  }

  async delete(ownerId: string, name: string): Promise<boolean> {
    const result = await this.core.db.deleteFrom('secrets').where('owner_id', '=', ownerId).where('name', '=', name).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}

function toRecord(row: ShownRow): SecretRecord {
  return { id: row.id, ownerId: row.owner_id, name: row.name, createdAt: row.created_at, updatedAt: row.updated_at };
}
