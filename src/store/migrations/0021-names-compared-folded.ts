import { type Kysely, sql } from 'kysely';
import { fold } from '../../domain/name.ts';
import type { SqlDialect } from '../dialect.ts';

// Names are compared as domain/name.ts `fold` makes them (NFC, case folded, shaping characters left out): each table
// of named things keeps that key beside the name, unique per owner (accounts: unique), so that "Café" and "café", or
// a name and its decomposed twin, can't both be made, even by concurrent creates. Rows written before get their key;
// where two of one owner fold alike, the oldest keeps the plain key and each other one gets its own (the key with its
// id), so they stay as they are until renamed. Search text is folded again the same way ("istanbul" finds
// "İstanbul"). Printable ASCII folds as both databases' lower() does: those keys are made in SQL, the others here.

const NAMED = [
  { table: 'templates', owner: 'owner_id' },
  { table: 'endpoints', owner: 'owner_id' },
  { table: 'registry_auths', owner: 'owner_id' },
  { table: 'accounts', owner: undefined },
] as const;

const BATCH = 1000;

export async function up(db: Kysely<any>, dialect: SqlDialect): Promise<void> {
  const postgres = dialect.name === 'postgres';
  const ascii = (column: string) => (postgres ? sql.raw(`${column} ~ '^[ -~]*$'`) : sql.raw(`${column} not glob '*[^ -~]*'`));
  for (const { table, owner } of NAMED) {
    await db.schema.alterTable(table).addColumn('name_key', 'text').execute();
    await sql`update ${sql.table(table)} set name_key = lower(name) where ${ascii('name')}`.execute(db);
    for (;;) {
      const rows: { id: string; name: string }[] = await db
        .selectFrom(table)
        .select(['id', 'name'])
        .where('name_key', 'is', null)
        .limit(BATCH)
        .execute();
      if (rows.length === 0) break;
      for (const row of rows)
        await db
          .updateTable(table)
          .set({ name_key: fold(row.name) })
          .where('id', '=', row.id)
          .execute();
    }
    // Two of one owner that fold alike: every one but the oldest gets a key of its own.
    const scope = owner ? [owner, 'name_key'] : ['name_key'];
    const groups: Record<string, string>[] = await db
      .selectFrom(table)
      .select(scope)
      .groupBy(scope)
      .having((eb) => eb.fn.countAll(), '>', 1)
      .execute();
    for (const group of groups) {
      let twins = db.selectFrom(table).select('id').orderBy('created_at').orderBy('id');
      for (const column of scope) twins = twins.where(column, '=', group[column]);
      const [, ...younger] = await twins.execute();
      for (const { id } of younger) {
        await db
          .updateTable(table)
          .set({ name_key: sql`name_key || ${` (${id})`}` })
          .where('id', '=', id)
          .execute();
      }
    }
    await db.schema.createIndex(`${table}_folded_name`).on(table).columns(scope).unique().execute();
  }

  // Search text of names or images beyond printable ASCII: folded again.
  let after = -1;
  for (;;) {
    const rows: { seq: number; name: string; image_name: string; search: string }[] = await db
      .selectFrom('templates')
      .select(['seq', 'name', 'image_name', 'search'])
      .where('seq', '>', after)
      .where(sql<boolean>`not (${ascii('(name || image_name)')})`)
      .orderBy('seq')
      .limit(BATCH)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const search = fold(`${row.name}\n${row.image_name}`);
      if (search !== row.search) await db.updateTable('templates').set({ search }).where('seq', '=', row.seq).execute();
    }
    after = Number((rows[rows.length - 1] as { seq: number }).seq);
  }
}
