import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { validate } from '@readme/openapi-parser';
import { type Harness, startHarness } from '../support/harness.ts';

let h: Harness;
before(async () => {
  h = await startHarness('sqlite');
});
after(() => h.close());

test('GET /v1/openapi.json is a valid OpenAPI 3.1 document, served without a key', async () => {
  const r = await h.call('GET', '/v1/openapi.json');
  assert.equal(r.status, 200);
  assert.equal(r.body.openapi, '3.1.0');
  const result = await validate(structuredClone(r.body));
  assert.equal(result.valid, true, JSON.stringify(result));
});

test('documents every operation with its error responses', async () => {
  const doc = (await h.call('GET', '/v1/openapi.json')).body;
  const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { operationId: string; responses: Record<string, unknown> }>).map(([method, op]) => ({
      path,
      method,
      op,
    })),
  );
  const ids = operations.map((o) => o.op.operationId).sort();
  assert.deepEqual(ids, [
    'CreateContainerRegistryAuth',
    'CreateEndpoint',
    'CreateTemplate',
    'DeleteContainerRegistryAuth',
    'DeleteEndpoint',
    'DeleteTemplate',
    'GetContainerRegistryAuth',
    'GetContainerRegistryAuthCredentials',
    'GetEndpoint',
    'GetTemplate',
    'Health',
    'ListContainerRegistryAuths',
    'ListEndpointReleases',
    'ListEndpoints',
    'ListTemplateRevisions',
    'ListTemplates',
    'Metrics',
    'PatchTemplate',
    'Ready',
    'ReportReleaseProgress',
    'ReportTemplateUsage',
    'RollbackTemplate',
    'UpdateTemplate',
  ]);
  for (const { path, method, op } of operations.filter((o) => o.path.startsWith('/v1/'))) {
    assert.ok(op.responses['200'] || op.responses['204'], `${method} ${path} documents its success`);
    for (const status of ['400', '401', '503']) assert.ok(op.responses[status], `${method} ${path} documents ${status}`);
    const problem = op.responses['401'] as { content: Record<string, { schema: { $ref: string } }> };
    assert.equal(problem.content['application/problem+json']?.schema.$ref, '#/components/schemas/Problem');
  }
  assert.ok(doc.paths['/v1/templates'].post.responses['409']);
  assert.ok(doc.paths['/v1/templates/{templateId}/update'].post.responses['403']);
  assert.ok(doc.paths['/v1/templates/{templateId}/update'].post.responses['412']);
  assert.ok(doc.paths['/v1/templates'].post.responses['422']);
  assert.ok(doc.paths['/v1/templates/{templateId}'].get.responses['200'].headers.etag);
  const headers = doc.paths['/v1/templates/{templateId}/rollback'].post.parameters.filter((p: { in: string }) => p.in === 'header');
  assert.deepEqual(headers.map((p: { name: string }) => p.name).sort(), ['idempotency-key', 'if-match']);
  assert.ok(doc.paths['/v1/containerregistryauth/{containerRegistryAuthId}'].delete.responses['409']);
  assert.ok(doc.paths['/v1/containerregistryauth/{containerRegistryAuthId}/credentials'].get.responses['403']);
});

test("registry auths: the public API's names and shapes; the password is write-only and never in a response", async () => {
  const doc = (await h.call('GET', '/v1/openapi.json')).body;
  const { ContainerRegistryAuth, ContainerRegistryAuthCreateInput } = doc.components.schemas;
  assert.deepEqual(Object.keys(ContainerRegistryAuth.properties), ['id', 'name', 'createdAt']);
  assert.deepEqual(ContainerRegistryAuthCreateInput.required, ['name', 'username', 'password']);
  assert.equal(ContainerRegistryAuthCreateInput.additionalProperties, false);
  const p = ContainerRegistryAuthCreateInput.properties;
  assert.deepEqual([p.name.maxLength, p.username.maxLength, p.password.maxLength, p.password.writeOnly], [255, 255, 16384, true]);
  const create = doc.paths['/v1/containerregistryauth'].post;
  assert.equal(create.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/ContainerRegistryAuth');
});

test('states every bound of the validation table, from the schemas that validate', async () => {
  const doc = (await h.call('GET', '/v1/openapi.json')).body;
  const create = doc.components.schemas.TemplateCreateInput;
  const p = create.properties;
  assert.deepEqual(create.required, ['name', 'imageName']);
  assert.equal(create.additionalProperties, false);
  assert.deepEqual([p.name.minLength, p.name.maxLength], [1, 255]);
  assert.deepEqual([p.containerDiskInGb.minimum, p.containerDiskInGb.maximum, p.containerDiskInGb.default], [1, 16384, 50]);
  assert.deepEqual([p.volumeInGb.minimum, p.volumeInGb.maximum, p.volumeInGb.default], [0, 16384, 20]);
  assert.deepEqual([p.volumeMountPath.maxLength, p.volumeMountPath.default], [255, '/workspace']);
  assert.equal(p.imageName.maxLength, 1024);
  assert.deepEqual(p.category.enum, ['NVIDIA', 'AMD', 'CPU']);
  assert.equal(p.containerRegistryAuthId.maxLength, 128);
  assert.deepEqual([p.dockerEntrypoint.maxItems, p.dockerEntrypoint.items.maxLength], [64, 4096]);
  assert.deepEqual(
    [p.env.maxProperties, p.env.propertyNames.pattern, p.env.additionalProperties.maxLength],
    [256, '^[A-Za-z_][A-Za-z0-9_]*$', 32768],
  );
  assert.deepEqual([p.ports.maxItems, p.ports.uniqueItems], [64, true]);
  assert.equal(p.readme.maxLength, 102400);
  const update = doc.components.schemas.TemplateUpdateInput.properties;
  assert.equal(update.category, undefined);
  assert.equal(update.isServerless, undefined);
  assert.equal(update.containerDiskInGb.default, undefined, 'update applies no defaults');
  const list = doc.paths['/v1/templates'].get.parameters.find((x: { name: string }) => x.name === 'limit');
  assert.deepEqual([list.schema.minimum, list.schema.maximum, list.schema.default], [1, 1000, 100]);
});

test('the interactive reference is served at /docs', async () => {
  const r = await h.app.inject({ method: 'GET', url: '/docs/' });
  assert.equal(r.statusCode, 200);
  assert.match(r.body, /swagger-ui/i);
});
