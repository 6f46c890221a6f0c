import { type Kysely, sql } from 'kysely';

// A template names only a registry auth of its own owner. The API has always checked it; a row written around the API
// (or before that check) could name another account's auth, whose password `resolve` would then have handed out, and
// whose owner could not delete it. Such references (and references to auths that are gone) are cleared here; since,
// `resolve` hands out an auth's credentials only for its owner's templates, and deleting an auth clears other accounts'
// references to it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update templates set container_registry_auth_id = '' where container_registry_auth_id <> '' and not exists (
      select 1 from registry_auths a where a.id = templates.container_registry_auth_id and a.owner_id = templates.owner_id)`.execute(db);
}
