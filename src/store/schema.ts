import type { Generated } from 'kysely';

// The tables as the query layer sees them. Booleans are 0/1 integers on both dialects, JSON values are text
// (so that a value reads back exactly as written), timestamps are ISO 8601 strings on the way in.

export interface AccountsTable {
  id: string;
  name: string;
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
}

export interface TemplatesTable {
  seq: Generated<number>;
  id: string;
  owner_id: string;
  endpoint_id: string | null;
  name: string;
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
}

export interface EndpointsTable {
  seq: Generated<number>;
  id: string;
  owner_id: string;
  name: string;
  template_id: string;
  workers_min: number;
  workers_max: number;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  templates: TemplatesTable;
  endpoints: EndpointsTable;
}
