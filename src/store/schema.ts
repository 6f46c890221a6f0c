import type { Generated } from 'kysely';

// The tables as the query layer sees them. Booleans are 0/1 integers on both dialects, JSON values are text
// (so that a value reads back exactly as written), timestamps are ISO 8601 strings on the way in.

export interface AccountsTable {
  id: string;
  name: string;
  /** The name as names are compared (domain/name.ts `fold`), unique per owner (migration 0021); null in rows written around the store. */
  name_key: string | null;
  role: 'user' | 'platform';
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  digest: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  label: string;
  access: 'read-write' | 'read';
  expires_at: string | null;
}

/** When each key was last used (migration 0023), apart from the key's row so that noting it changes no cached row. */
export interface ApiKeyUsesTable {
  key_id: string;
  last_used_at: string;
}

export interface TemplatesTable {
  seq: Generated<number>;
  id: string;
  owner_id: string;
  endpoint_id: string | null;
  name: string;
  /** The name as names are compared (domain/name.ts `fold`), unique per owner (migration 0021); null in rows written around the store. */
  name_key: string | null;
  image_name: string;
  category: string;
  container_disk_in_gb: number;
  volume_in_gb: number;
  volume_mount_path: string;
  container_registry_auth_id: string;
  docker_entrypoint: string;
  docker_start_cmd: string;
  env: string;
  ports: string;
  readme: string;
  is_public: number;
  is_platform: number;
  is_serverless: number;
  earned: number;
  runtime_in_min: number;
  revision: number;
  created_at: string;
  updated_at: string;
  /** Lowercased name and image, for the case-insensitive `q` filter on both dialects alike. */
  search: string;
  /**
   * The template as the API shows it (domain `templateJson`), rewritten with every write so that reads send it as
   * it is. NULL only until `Store.migrate` has built it (after the migration that added it, or one that clears it
   * because the representation changed).
   */
  body: string | null;
  // The image check (migration 0022): what the registry said, shown in `body` as imageCheck …
  image_check_status: string;
  image_checked_at: string | null;
  /** The digest the current revision is pinned to. */
  image_digest: string | null;
  /** JSON: an array of platform names. */
  image_platforms: string;
  image_size_bytes: number | null;
  image_cuda_version: string | null;
  image_check_reason: string | null;
  // … and the queue of checks: when one is due, its attempts, the lease of the process running it, the revision it
  // was asked at.
  image_check_due_at: string | null;
  image_check_attempts: number;
  image_check_leased_until: string | null;
  image_check_lease: string | null;
  image_check_revision: number;
}

export interface EndpointsTable {
  seq: Generated<number>;
  id: string;
  owner_id: string;
  name: string;
  /** The name as names are compared (domain/name.ts `fold`), unique per owner (migration 0021); null in rows written around the store. */
  name_key: string | null;
  template_id: string;
  workers_min: number;
  workers_max: number;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface TemplateRevisionsTable {
  template_id: string;
  revision: number;
  /** The template's content at this revision, as JSON. */
  snapshot: string;
  /** The changes from the revision before, as JSON: [{ field, from, to }]. */
  diff: string;
  key_id: string;
  created_at: string;
  /** The digest this revision's image was pinned to (migration 0022); null until its check found one. */
  image_digest: string | null;
}

export interface ReleasesTable {
  /** A rebind's release: the template the endpoint ran before, whose values its diff shows (migration 0019). */
  previous_template_id: string | null;
  seq: Generated<number>;
  id: string;
  endpoint_id: string;
  version: number;
  template_id: string;
  template_revision: number;
  diff: string;
  status: string;
  workers_updated: number;
  workers_total: number;
  created_at: string;
  updated_at: string;
  /** The image digest the release rolls out (migration 0022); null when its revision had none. */
  image_digest: string | null;
}

export interface OutboxTable {
  seq: Generated<number>;
  event_id: string;
  type: string;
  /** What the event is about (a release id): how an API reader finds the delivery state. */
  subject_id: string;
  /** Events with one ordering key (an endpoint) are delivered one after another, in the order written. */
  ordering_key: string;
  payload: string;
  created_at: string;
  attempts: Generated<number>;
  next_attempt_at: string;
  /** While a deliverer holds the row: no other deliverer takes it before this time. */
  leased_until: string | null;
  /** Names the claim that holds the lease: only its holder may record the outcome. */
  lease_token: string | null;
  last_error: string | null;
  delivered_at: string | null;
  /** The account the event is for (migration 0019): delivery takes accounts in turn. */
  account_id: string | null;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  request_hash: string;
  status: number;
  headers: string;
  /** Empty when `answer` names what the response was (migration 0019); the whole response of rows kept before. */
  body: string;
  /** What the write answered with, as a reference to rebuild it (a template at its revision), or null. */
  answer: string | null;
  /** The SHA-256 of the response's body, which a rebuilt one must match. */
  body_digest: string | null;
  created_at: string;
}

export interface UsageReportsTable {
  usage_id: string;
  template_id: string;
  runtime_in_min: number;
  earned: number;
  created_at: string;
}

/** What an account holds, kept by triggers on templates and endpoints (migration 0005). */
export interface AccountUsageTable {
  account_id: string;
  templates: number;
  template_bytes: number;
  endpoints: number;
  /** Migration 0012. */
  registry_auths: number;
  /** Bytes of its templates' revisions, its endpoints' releases and its undelivered events (migration 0019). */
  history_bytes: number;
  /** Responses kept for its Idempotency-Keys (migration 0019). */
  stored_responses: number;
}

/** Token buckets shared by every process (migration 0006). */
export interface RateBucketsTable {
  bucket: string;
  tokens: number;
  updated_ms: number;
  /** What the last take granted: how the statement that takes tokens tells how many it took. */
  granted: number;
}

export interface RegistryAuthsTable {
  seq: Generated<number>;
  id: string;
  owner_id: string;
  name: string;
  /** The name as names are compared (domain/name.ts `fold`), unique per owner (migration 0021); null in rows written around the store. */
  name_key: string | null;
  username: string;
  /** Sealed (sealing/keyring.ts): never the password in plain text. */
  password: string;
  created_at: string;
}

/** An account's secrets (migration 0011). */
export interface SecretsTable {
  seq: Generated<number>;
  id: string;
  owner_id: string;
  name: string;
  /** Sealed (sealing/keyring.ts): never the value in plain text. */
  value: string;
  created_at: string;
  updated_at: string;
}

/** One row, sealed under the key that sealed the first secret: a process with another key refuses to start. */
export interface SecretKeyCheckTable {
  id: string;
  sealed: string;
}

export interface Tables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  api_key_uses: ApiKeyUsesTable;
  templates: TemplatesTable;
  endpoints: EndpointsTable;
  template_revisions: TemplateRevisionsTable;
  releases: ReleasesTable;
  outbox: OutboxTable;
  idempotency_keys: IdempotencyKeysTable;
  usage_reports: UsageReportsTable;
  account_usage: AccountUsageTable;
  rate_buckets: RateBucketsTable;
  registry_auths: RegistryAuthsTable;
  secret_key_check: SecretKeyCheckTable;
  secrets: SecretsTable;
}
