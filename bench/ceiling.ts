import Fastify from 'fastify';
import { Template } from '../src/domain/template.ts';
import { sampleTemplate } from './sample.ts';

// The ceiling: a bare Fastify route answering a constant Template through the same response schema, with no
// authentication, no database and no logging. What Podplate does on top of this is what the benchmark measures.

const template = sampleTemplate('c0nstant0templat', 'ceiling', '2026-01-01T00:00:00.000Z');

const app = Fastify({ logger: false });
app.addSchema(Template);
app.get('/v1/templates/:templateId', { schema: { response: { 200: { $ref: 'Template#' } } } }, async () => template);
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`${JSON.stringify({ port: (app.server.address() as { port: number }).port })}\n`);
