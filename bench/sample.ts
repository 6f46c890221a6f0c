import type { Template } from '../src/domain/template.ts';

/**
 * The template the benchmark serves: what the seeder writes into every row (with its own id and name) and what the
 * ceiling answers, so both send the same bytes.
 */
export const sampleTemplate = (id: string, name: string, at: string): Template => ({
  id,
  name,
  imageName: 'runpod/pytorch:2.1.0',
  category: 'NVIDIA',
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: '/workspace',
  containerRegistryAuthId: '',
  dockerEntrypoint: [],
  dockerStartCmd: [],
  env: { HF_HOME: '/workspace/hf' },
  ports: ['8888/http', '22/tcp'],
  readme: '# Seeded',
  isPublic: true,
  isPlatform: false,
  isServerless: false,
  earned: 0,
  runtimeInMin: 0,
  revision: 1,
  createdAt: at,
  updatedAt: at,
  imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
});
