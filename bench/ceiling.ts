import Fastify from 'fastify';
import { Template } from '../src/domain/template.ts';

// The ceiling: a bare Fastify route answering a constant Template through the same response schema, with no
// authentication, no database and no logging. What Podplate does on top of this is what the benchmark measures.

const template = {
  id: 'c0nstant0templat',
  name: 'ceiling',
  imageName: 'runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04',
  category: 'NVIDIA',
  containerDiskInGb: 50,
  volumeInGb: 20,
  volumeMountPath: '/workspace',
  containerRegistryAuthId: '',
  dockerEntrypoint: [],
  dockerStartCmd: [],
  env: { HF_HOME: '/workspace/hf' },
  ports: ['8888/http', '22/tcp'],
  readme: '# A template\n\nWith a readme.',
  isPublic: true,
  isPlatform: false,
  isServerless: false,
  earned: 0,
  runtimeInMin: 0,
  revision: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

const app = Fastify({ logger: false });
app.addSchema(Template);
app.get('/v1/templates/:templateId', { schema: { response: { 200: { $ref: 'Template#' } } } }, async () => template);
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`${JSON.stringify({ port: (app.server.address() as { port: number }).port })}\n`);
