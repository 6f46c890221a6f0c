import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { validate } from '@readme/openapi-parser';
import { IMAGE_REFERENCE_PATTERN } from '../../src/domain/image-reference.ts';
import { MOUNT_PATH_PATTERN } from '../../src/domain/mount-path.ts';
import { SENT_BACK_FIELDS } from '../../src/domain/template.ts';
import { STORABLE_TEXT } from '../../src/domain/text.ts';
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
    'CheckTemplateImage',
    'CreateAccount',
    'CreateApiKey',
    'CreateContainerRegistryAuth',
    'CreateEndpoint',
    'CreateTemplate',
    'DeleteContainerRegistryAuth',
    'DeleteEndpoint',
    'DeleteSecret',
    'DeleteTemplate',
    'GetContainerRegistryAuth',
    'GetContainerRegistryAuthCredentials',
    'GetEndpoint',
    'GetMe',
    'GetTemplate',
    'Health',
    'ListApiKeys',
    'ListContainerRegistryAuths',
    'ListEndpointReleases',
    'ListEndpoints',
    'ListSecrets',
    'ListTemplateRevisions',
    'ListTemplates',
    'Metrics',
    'PatchTemplate',
    'PutSecret',
    'Ready',
    'RepinTemplateImage',
    'ReportReleaseProgress',
    'ReportTemplateUsage',
    'ResolveTemplate',
    'RevokeApiKey',
    'RollbackTemplate',
    'UpdateEndpoint',
    'UpdateTemplate',
  ]);
  for (const { path, method, op } of operations.filter((o) => o.path.startsWith('/v1/'))) {
    assert.ok(op.responses['200'] || op.responses['201'] || op.responses['204'], `${method} ${path} documents its success`);
    for (const status of ['400', '401', '429', '503']) assert.ok(op.responses[status], `${method} ${path} documents ${status}`);
    // Every write may be a read-only key's: a 403.
    if (method !== 'get') assert.ok(op.responses['403'], `${method} ${path} documents 403`);
    const problem = op.responses['401'] as { content: Record<string, { schema: { $ref: string } }> };
    assert.equal(problem.content['application/problem+json']?.schema.$ref, '#/components/schemas/Problem');
  }
  assert.ok(doc.paths['/v1/templates'].post.responses['409']);
  assert.ok(doc.paths['/v1/templates/{templateId}/update'].post.responses['403']);
  assert.ok(doc.paths['/v1/templates/{templateId}/update'].post.responses['412']);
  assert.ok(doc.paths['/v1/templates'].post.responses['422']);
  assert.ok(doc.paths['/v1/templates/{templateId}'].get.responses['200'].headers.etag);
  const headers = doc.paths['/v1/templates/{templateId}/rollback'].post.parameters.filter((p: { in: string }) => p.in === 'header');
  assert.deepEqual(headers.map((p: { name: string }) => p.name).sort(), ['idempotency-key', 'if-match', 'if-none-match']);
  const get = doc.paths['/v1/templates/{templateId}'].get;
  assert.deepEqual(Object.keys(get.responses['304'].headers), ['etag']);
  assert.equal(get.responses['304'].content, undefined, 'a 304 has no body');
  assert.ok(get.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'if-none-match'));
  assert.ok(doc.paths['/v1/containerregistryauth/{containerRegistryAuthId}'].delete.responses['409']);
  assert.ok(doc.paths['/v1/containerregistryauth/{containerRegistryAuthId}/credentials'].get.responses['403']);
  assert.ok(doc.paths['/v1/containerregistryauth'].post.responses['403'], 'a create past the quota');
  assert.match(doc.paths['/v1/templates/{templateId}/rollback'].post.description, /no longer kept .* 409/);
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

test('secrets: names like env names, values write-only and never in a response; the resolve for platform keys', async () => {
  const doc = (await h.call('GET', '/v1/openapi.json')).body;
  const { Secret, SecretInput, ResolvedTemplate, Problem } = doc.components.schemas;
  assert.deepEqual(Object.keys(Secret.properties), ['name', 'createdAt', 'updatedAt']);
  assert.deepEqual([SecretInput.properties.value.maxLength, SecretInput.properties.value.writeOnly], [32768, true]);
  const put = doc.paths['/v1/secrets/{name}'].put;
  assert.equal(put.parameters[0].schema.pattern, '^[A-Za-z_][A-Za-z0-9_]*$');
  assert.ok(put.responses['201'].headers.location);
  const resolve = doc.paths['/v1/templates/{templateId}/resolve'].post;
  for (const status of ['200', '403', '404', '422']) assert.ok(resolve.responses[status], status);
  assert.equal(resolve.responses['422'].description, 'Template cannot be resolved');
  assert.deepEqual(Object.keys(ResolvedTemplate.properties), ['template', 'containerRegistryCredentials', 'imageDigest']);
  assert.ok(Problem.properties.missingSecrets);
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
  for (const field of SENT_BACK_FIELDS.filter((f) => f !== 'imageCheck')) {
    assert.match(update[field].description, /Accepted, and ignored, when it equals the current value; another value is a 4(00|12)/, field);
  }
  // The image check changes without a revision: a read's, however old, is accepted back.
  assert.match(update.imageCheck.description, /accepted, and ignored, whatever it holds/);
  assert.equal(update.containerDiskInGb.default, undefined, 'update applies no defaults');
  const list = doc.paths['/v1/templates'].get.parameters.find((x: { name: string }) => x.name === 'limit');
  assert.deepEqual([list.schema.minimum, list.schema.maximum, list.schema.default], [1, 1000, 100]);
});

/** Every object in `value`, with the path of keys to it. */
function* objects(value: unknown, path: string[] = []): Generator<[string[], Record<string, unknown>]> {
  if (typeof value !== 'object' || value === null) return;
  if (!Array.isArray(value)) yield [path, value as Record<string, unknown>];
  for (const [key, inner] of Object.entries(value)) yield* objects(inner, [...path, key]);
}

test('publishes no keyword only this validator knows, and formats and patterns any validator can check', async () => {
  const doc = (await h.call('GET', '/v1/openapi.json')).body;
  for (const [path, object] of objects(doc)) {
    const where = path.join('.');
    assert.equal(object.errorMessage, undefined, where);
    assert.equal(object['x-max-bytes'], undefined, where);
    if (typeof object.format === 'string' && path.at(-2) !== 'properties') {
      assert.ok(['date-time', 'uri-reference'].includes(object.format), `${where}: format ${object.format}`);
    }
    if (typeof object.pattern === 'string') new RegExp(object.pattern, 'u'); // ECMA-262, as JSON Schema says
  }
  for (const input of ['TemplateCreateInput', 'TemplateUpdateInput', 'Template']) {
    const p = doc.components.schemas[input].properties;
    assert.equal(p.imageName.pattern, IMAGE_REFERENCE_PATTERN, input);
    assert.match(p.imageName.description, /The repository path is lowercase/);
    assert.equal(p.volumeMountPath.pattern, MOUNT_PATH_PATTERN, input);
    assert.match(p.volumeMountPath.description, /written in normal form: not "\/", and no empty/);
    assert.deepEqual([p.readme.maxLength, p.readme.pattern], [102400, STORABLE_TEXT]);
    assert.equal(p.env.additionalProperties.pattern, STORABLE_TEXT);
  }
});

test('reading the document leaves the validator its own keywords', async () => {
  assert.equal((await h.call('GET', '/v1/openapi.json')).status, 200);
  const alice = await h.key('keywords');
  const r = await h.call('POST', '/v1/templates', {
    key: alice,
    body: { name: 'x', imageName: 'Ubuntu', ports: ['1/udp'], readme: '€'.repeat(102_401), volumeMountPath: '/a/..' },
  });
  assert.equal(r.status, 400);
  assert.deepEqual(
    r.body.errors.map((e: { path: string; message: string }) => [e.path, e.message]),
    [
      ['/imageName', 'repository names must be lowercase'],
      ['/volumeMountPath', 'must not contain a ".." segment'],
      ['/ports/0', 'must be a port from 1 to 65535 and the protocol http or tcp, like 8888/http'],
      ['/readme', 'must be at most 102400 characters'],
    ],
  );
});

test('declares each response header once, with a schema, wherever it is sent', async () => {
  const doc = (await h.call('GET', '/v1/openapi.json')).body;
  const responses = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { operationId: string; responses: Record<string, Record<string, any>> }>).flatMap(
      ([method, op]) => Object.entries(op.responses).map(([status, response]) => ({ path, method, id: op.operationId, status, response })),
    ),
  );
  for (const { id, status, response } of responses) {
    for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, any>)) {
      assert.equal(typeof header.description, 'string', `${id} ${status} ${name}`);
      assert.ok(header.schema.type || header.schema.const, `${id} ${status} ${name} has a typed schema`);
      assert.equal(header.schema.schema, undefined, `${id} ${status} ${name} is not nested twice`);
    }
  }
  const headersOf = (id: string, status: string) =>
    Object.keys(responses.find((r) => r.id === id && r.status === status)?.response.headers ?? {}).sort();
  const templateOps = ['GetTemplate', 'UpdateTemplate', 'PatchTemplate', 'ReportTemplateUsage'];
  for (const id of templateOps) assert.deepEqual(headersOf(id, '200'), ['etag'], id);
  assert.deepEqual(headersOf('CreateTemplate', '200'), ['etag', 'idempotent-replayed', 'location']);
  assert.deepEqual(headersOf('RollbackTemplate', '200'), ['etag', 'idempotent-replayed']);
  assert.deepEqual(headersOf('CreateEndpoint', '200'), ['location']);
  for (const id of ['ListTemplates', 'ListTemplateRevisions', 'ListEndpoints', 'ListEndpointReleases']) {
    assert.deepEqual(headersOf(id, '200'), ['link', 'x-next-page'], id);
  }
  for (const { id, status } of responses) {
    if (status === '401') assert.deepEqual(headersOf(id, status), ['www-authenticate'], id);
    if (status === '429' || status === '503') assert.deepEqual(headersOf(id, status), ['retry-after'], `${id} ${status}`);
  }
});

test('every operation is described, and the document names a contact', async () => {
  const doc = (await h.call('GET', '/v1/openapi.json')).body;
  assert.ok(doc.info.contact?.url);
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, { summary?: string; description?: string }>)) {
      assert.ok(op.summary && op.description, `${method} ${path}`);
    }
  }
});

test("the document passes the linters' stock rulesets, none turned off: a license, a full contact, sorted tags, 4xx everywhere", async () => {
  const doc = (await h.call('GET', '/v1/openapi.json')).body;
  assert.deepEqual(Object.keys(doc.info.license).sort(), ['name', 'url']);
  assert.deepEqual(Object.keys(doc.info.contact).sort(), ['email', 'name', 'url']);
  const tags = doc.tags.map((t: { name: string }) => t.name);
  assert.deepEqual(tags, [...tags].sort());
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, { responses: Record<string, unknown> }>)) {
      assert.ok(
        Object.keys(op.responses).some((status) => status.startsWith('4')),
        `${method} ${path} declares a 4xx`,
      );
    }
  }
  const redocly = readFileSync(new URL('../../redocly.yaml', import.meta.url), 'utf8');
  const spectral = readFileSync(new URL('../../.spectral.yaml', import.meta.url), 'utf8');
  assert.match(redocly, /^extends:\n {2}- recommended\n/m);
  assert.doesNotMatch(redocly, /^rules:/m, 'no Redocly rule is changed');
  assert.match(spectral, /^extends: \[\["spectral:oas", "all"\]\]$/m);
  assert.doesNotMatch(spectral, /^rules:/m, 'no Spectral rule is changed');
});

test('/healthz, /readyz and /metrics refuse a query parameter by name, as every operation does (their documented 400)', async () => {
  for (const url of ['/healthz?verbose=1', '/readyz?x', '/metrics?name[]=a']) {
    const r = await h.call('GET', url);
    assert.equal(r.status, 400, url);
    assert.equal(r.body.errors[0].in, 'query', url);
  }
  for (const url of ['/healthz', '/readyz', '/metrics']) assert.equal((await h.call('GET', url)).status, 200, url);
});

test('the interactive reference is served at /docs', async () => {
  const r = await h.app.inject({ method: 'GET', url: '/docs/' });
  assert.equal(r.statusCode, 200);
  assert.match(r.body, /swagger-ui/i);
});

test('every response of /docs carries a Content-Security-Policy that forbids framing, inline script and <base>', async () => {
  const policy =
    "default-src 'self'; base-uri 'none'; font-src 'self' data:; frame-ancestors 'none'; img-src 'self' data:; " +
    "object-src 'none'; script-src 'self'; script-src-attr 'none'; " +
    "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='; form-action 'none'";
  for (const url of ['/docs', '/docs/', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/json']) {
    const r = await h.app.inject({ method: 'GET', url });
    assert.equal(r.statusCode, 200, url);
    assert.equal(r.headers['content-security-policy'], policy, url);
    assert.equal(r.headers['x-frame-options'], 'DENY', url);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', url);
    assert.equal(r.headers['referrer-policy'], 'no-referrer', url);
  }
  // No validator badge: it would send the document's address to validator.swagger.io.
  const initializer = await h.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
  assert.match(initializer.body, /"validatorUrl":null/);
});
