import { type Kysely, sql } from 'kysely';
import type { Core } from './core.ts';

// Every column that holds sealed secrets (sealing/keyring.ts), and the generic reads and writes that rotating the key
// needs. `podplate secrets rotate` seals again every value of every column listed here: a new kind of secret adds its
// column to SEALED_COLUMNS, and nothing else.

export interface SealedColumn {
  /** What the values are, in words, for reports. */
  what: string;
  table: string;
  /** The column that names a row (unique, text). */
  key: string;
  /** The column that holds the sealed value. */
  column: string;
}

export const REGISTRY_AUTH_PASSWORDS = {
  what: 'registry auth passwords',
  table: 'registry_auths',
  key: 'id',
  column: 'password',
} as const satisfies SealedColumn;

export const SECRET_VALUES = { what: 'secrets', table: 'secrets', key: 'id', column: 'value' } as const satisfies SealedColumn;

export const KEY_CHECK = { what: 'key checks', table: 'secret_key_check', key: 'id', column: 'sealed' } as const satisfies SealedColumn;

/** Every sealed column, in the order rotation visits them. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [KEY_CHECK, REGISTRY_AUTH_PASSWORDS, SECRET_VALUES];

/** The associated data of a sealed value: its table, column and row, so that a value copied to another place won't open. */
export const sealedContext = (column: SealedColumn, key: string): string => `${column.table}.${column.column}/${key}`;

export interface SealedValue {
  key: string;
  sealed: string;
}

/** What the root store may do with sealed columns: read. Writes are a transaction's (store.ts). */
export type SealedReads = Pick<SealedRepository, 'page' | 'keyCheck'>;

/** The sealed columns read and written generically, by name, for rotation. */
export class SealedRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  private get db(): Kysely<any> {
    return this.core.db as unknown as Kysely<any>;
  }

  /** Up to `limit` values of `column` in key order, after the row `after`. */
  async page(column: SealedColumn, limit: number, after?: string): Promise<SealedValue[]> {
    let select = this.db
      .selectFrom(column.table)
      .select([sql.ref<string>(column.key).as('key'), sql.ref<string>(column.column).as('sealed')]);
    if (after !== undefined) select = select.where(sql.ref(column.key), '>', after);
    const rows = await select.orderBy(sql.ref(column.key)).limit(limit).execute();
    return rows as SealedValue[];
  }

  /** Replaces a value only if it is still `from` (a row changed or deleted meanwhile is left alone); whether it did. */
  async replace(column: SealedColumn, key: string, from: string, to: string): Promise<boolean> {
    const result = await this.db
      .updateTable(column.table)
      .set({ [column.column]: to })
      .where(sql.ref(column.key), '=', key)
      .where(sql.ref(column.column), '=', from)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** The one key-check value, if any was sealed yet. */
  async keyCheck(): Promise<string | undefined> {
    const row = await this.core.db.selectFrom('secret_key_check').select('sealed').where('id', '=', 'check').executeTakeFirst();
    return row?.sealed;
  }

  /** Stores the key-check value unless one is there already (another process may have been first). */
  async insertKeyCheck(sealed: string): Promise<void> {
    await this.core.db
      .insertInto('secret_key_check')
      .values({ id: 'check', sealed })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
  }
}
