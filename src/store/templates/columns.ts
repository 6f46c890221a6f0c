import type { Selectable } from 'kysely';
import { fold } from '../../domain/name.ts';
import type { RevisionRecord } from '../../domain/revision.ts';
import { searchFold, type TemplateRecord, templateJson } from '../../domain/template.ts';
import type { TemplateRevisionsTable, TemplatesTable } from '../schema.ts';

// A template and its revisions as rows, and back: the one place that knows both shapes.

/** Every column of a template row, named (prepared statements must not select `*`). */
export const TEMPLATE_COLUMNS = [
  'seq',
  'id',
  'owner_id',
  'endpoint_id',
  'name',
  'image_name',
  'category',
  'container_disk_in_gb',
  'volume_in_gb',
  'volume_mount_path',
  'container_registry_auth_id',
  'docker_entrypoint',
  'docker_start_cmd',
  'env',
  'ports',
  'readme',
  'is_public',
  'is_platform',
  'is_serverless',
  'earned',
  'runtime_in_min',
  'revision',
  'created_at',
  'updated_at',
  'search',
  'body',
  'name_key',
  'image_check_status',
  'image_checked_at',
  'image_digest',
  'image_platforms',
  'image_size_bytes',
  'image_cuda_version',
  'image_check_reason',
  'image_check_due_at',
  'image_check_attempts',
  'image_check_leased_until',
  'image_check_lease',
  'image_check_revision',
] as const satisfies readonly (keyof TemplatesTable)[];
// A column added to TemplatesTable and not listed above fails to compile here.
const everyColumnListed: Exclude<keyof TemplatesTable, (typeof TEMPLATE_COLUMNS)[number]> extends never ? true : never = true;
void everyColumnListed;

/** The queue of image checks (store/templates/image-checks.ts): the store's own columns, never part of a template record. */
export const QUEUE_COLUMNS = [
  'image_check_due_at',
  'image_check_attempts',
  'image_check_leased_until',
  'image_check_lease',
  'image_check_revision',
] as const satisfies readonly (keyof TemplatesTable)[];

/** A template's row but for its place in the queue of image checks. */
export type TemplateRow = Omit<Selectable<TemplatesTable>, 'seq' | (typeof QUEUE_COLUMNS)[number]> & { seq?: number };

/** A template as its row's columns, its representation and search text built from it. */
export function toRow(t: TemplateRecord): TemplateRow {
  return {
    id: t.id,
    owner_id: t.ownerId,
    endpoint_id: t.endpointId,
    name: t.name,
    image_name: t.imageName,
    category: t.category,
    container_disk_in_gb: t.containerDiskInGb,
    volume_in_gb: t.volumeInGb,
    volume_mount_path: t.volumeMountPath,
    container_registry_auth_id: t.containerRegistryAuthId,
    docker_entrypoint: JSON.stringify(t.dockerEntrypoint),
    docker_start_cmd: JSON.stringify(t.dockerStartCmd),
    env: JSON.stringify(t.env),
    ports: JSON.stringify(t.ports),
    readme: t.readme,
    is_public: t.isPublic ? 1 : 0,
    is_platform: t.isPlatform ? 1 : 0,
    is_serverless: t.isServerless ? 1 : 0,
    earned: t.earned,
    runtime_in_min: t.runtimeInMin,
    revision: t.revision,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    search: searchText(t),
    body: templateJson(t),
    name_key: fold(t.name),
    image_check_status: t.imageCheck.status,
    image_checked_at: t.imageCheck.checkedAt,
    image_digest: t.imageCheck.digest,
    image_platforms: JSON.stringify(t.imageCheck.platforms),
    image_size_bytes: t.imageCheck.sizeBytes,
    image_cuda_version: t.imageCheck.cudaVersion,
    image_check_reason: t.imageCheck.reason,
  };
}

/** What `q` searches: the name and image, lowercased, a line apart (so that no term spans both). */
export const searchText = (t: Pick<TemplateRecord, 'name' | 'imageName'>) => searchFold(`${t.name}\n${t.imageName}`);

/** A template row as the record it stores. */
export function toTemplate(row: Selectable<TemplatesTable>): TemplateRecord {
  return {
    id: row.id,
    name: row.name,
    imageName: row.image_name,
    category: row.category as TemplateRecord['category'],
    containerDiskInGb: row.container_disk_in_gb,
    volumeInGb: row.volume_in_gb,
    volumeMountPath: row.volume_mount_path,
    containerRegistryAuthId: row.container_registry_auth_id,
    dockerEntrypoint: JSON.parse(row.docker_entrypoint),
    dockerStartCmd: JSON.parse(row.docker_start_cmd),
    env: JSON.parse(row.env),
    ports: JSON.parse(row.ports),
    readme: row.readme,
    isPublic: row.is_public === 1,
    isPlatform: row.is_platform === 1,
    isServerless: row.is_serverless === 1,
    earned: row.earned,
    runtimeInMin: Number(row.runtime_in_min),
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    imageCheck: {
      status: row.image_check_status as TemplateRecord['imageCheck']['status'],
      checkedAt: row.image_checked_at,
      digest: row.image_digest,
      platforms: JSON.parse(row.image_platforms),
      sizeBytes: row.image_size_bytes === null ? null : Number(row.image_size_bytes),
      cudaVersion: row.image_cuda_version,
      reason: row.image_check_reason,
    },
    ownerId: row.owner_id,
    endpointId: row.endpoint_id,
  };
}

export function toRevision(row: Selectable<TemplateRevisionsTable>): RevisionRecord {
  return {
    templateId: row.template_id,
    revision: row.revision,
    snapshot: JSON.parse(row.snapshot),
    diff: JSON.parse(row.diff),
    keyId: row.key_id,
    createdAt: row.created_at,
    imageDigest: row.image_digest,
  };
}
