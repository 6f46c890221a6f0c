import { type Kysely, sql } from 'kysely';
import type { Tables } from '../schema.ts';

// A bulk load into empty PostgreSQL tables (import): keeping a dozen secondary indexes (the trigram GIN among them)
// up to date row by row costs more than the rows themselves at a million templates; building each once from the
// loaded table is several times quicker. Everything happens inside the load's one transaction: until it commits,
// nobody else sees the tables (the import holds them locked), and a failed load rolls the drop back with the rest.

/** An index dropped for the load, to be built again from its own definition. */
export interface SetAside {
  name: string;
  definition: string;
}

/**
 * Drops the secondary indexes of `tables` (in the current schema) and returns their definitions, read from
 * pg_indexes: those backing a constraint (primary keys, unique constraints) stay, as the load's own checks and
 * foreign keys use them.
 */
export async function setIndexesAside(db: Kysely<Tables>, tables: readonly string[]): Promise<SetAside[]> {
  const { rows } = await sql<SetAside>`select i.indexname as name, i.indexdef as definition
    from pg_indexes i
    where i.schemaname = current_schema() and i.tablename = any(${[...tables]}::text[])
      and not exists (
        select 1 from pg_constraint c
        where c.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass
      )
    order by i.tablename, i.indexname`.execute(db);
  for (const index of rows) await sql`drop index ${sql.id(index.name)}`.execute(db);
  return rows;
}

/** Builds again the indexes `setIndexesAside` dropped, each from its definition, with memory enough to sort in one go. */
export async function restoreIndexes(db: Kysely<Tables>, indexes: readonly SetAside[]): Promise<void> {
  if (indexes.length === 0) return;
  await sql`set local maintenance_work_mem = '256MB'`.execute(db);
  for (const index of indexes) await sql.raw(index.definition).execute(db);
}
