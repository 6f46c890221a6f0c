import { type Kysely, sql } from 'kysely';

// Each template's API representation, kept beside its row (see TemplatesTable.body). The column starts NULL;
// Store.migrate builds every missing body right after the migrations, found through a partial index that stays
// empty once they are built.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('templates').addColumn('body', 'text').execute();
  await db.schema.createIndex('templates_body_missing').on('templates').column('seq').where(sql.ref('body'), 'is', null).execute();
}
