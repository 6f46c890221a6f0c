import { type Kysely, sql } from 'kysely';
import { changeTriggers } from '../cache/change-names.ts';
import type { SqlDialect } from '../dialect.ts';

// The triggers of migration 0008 made again from the change names the read cache reads (cache/change-names.ts), and
// on PostgreSQL also telling the transaction that wrote, so that no code of the writer's has to announce a change.

export async function up(db: Kysely<unknown>, dialect: SqlDialect): Promise<void> {
  for (const statement of changeTriggers(dialect.name)) await sql.raw(statement).execute(db);
}
