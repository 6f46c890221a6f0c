import type { TemplateRecord } from '../../src/domain/template.ts';

// Template records for store-level tests: a plain private Pod template of account acc_a, with a fresh id and name.

export const at = '2026-01-02T03:04:05.678Z';
let n = 0;

export const templateRecord = (overrides: Partial<TemplateRecord> = {}): TemplateRecord => ({
  id: `tmpl${String(++n).padStart(12, '0')}`,
  name: `name ${n}`,
  imageName: 'ubuntu:22.04',
  category: 'NVIDIA',
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: '/workspace',
  containerRegistryAuthId: '',
  dockerEntrypoint: [],
  dockerStartCmd: [],
  env: {},
  ports: [],
  readme: '',
  isPublic: false,
  isPlatform: false,
  isServerless: false,
  earned: 0,
  runtimeInMin: 0,
  revision: 1,
  createdAt: at,
  updatedAt: at,
  imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
  ownerId: 'acc_a',
  endpointId: null,
  ...overrides,
});
