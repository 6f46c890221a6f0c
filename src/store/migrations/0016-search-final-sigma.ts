import { type Kysely, sql } from 'kysely';

// `q` compares text folded by domain/template.ts `searchFold`: lowercased, and the Greek final sigma (ς) as any other
// (σ), which `toLowerCase` keeps apart (a word-final Σ becomes ς, a lone one σ, so `q=Σ` missed "ΟΔΟΣ"). Rows
// written before hold ς in `search`: folded here. (On SQLite the trigram table follows through its trigger.)

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update templates set search = replace(search, 'ς', 'σ') where search like '%ς%'`.execute(db);
}
