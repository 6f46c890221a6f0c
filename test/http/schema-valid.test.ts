import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';
import { arbitraryOf } from '../support/schema-arbitrary.ts';

// The document is as strict as the server: bodies (and the Idempotency-Key header) drawn from the schemas of the
// served OpenAPI document alone, as a generated client or a fuzzer would send them, are accepted — never a 400 for a
// rule the document does not state. A few rules the document states in words only, not as a schema (a registry auth
// id must be one of the owner's; a read-only field sent back to an update must hold its current value; the body is
// at most 1 MiB), are kept by the test as a client would keep them: each is named where it is kept.

const RUNS = Number(process.env.SCHEMA_RUNS ?? 80);
const BODY_LIMIT = 1024 * 1024;
const fits = (body: unknown) => Buffer.byteLength(JSON.stringify(body)) <= BODY_LIMIT;
type Json = any;

forEachDialect('bodies drawn from the served document', (dialect) => {
  let h: Harness;
  let doc: Json;
  let platform: string;
  let checker: Ajv2020;
  let accounts = 0;

  before(async () => {
    h = await startHarness(dialect);
    platform = await h.key('platform', 'platform');
    doc = (await h.call('GET', '/v1/openapi.json')).body;
    // The draws are checked against the document by a validator of its own, so that a failure is the server's.
    checker = new Ajv2020({ strict: false, allErrors: true });
    checker.addFormat('date-time', true);
    checker.addFormat('uri-reference', true);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      checker.addSchema(schema as object, `#/components/schemas/${name}`);
  });
  after(() => h.close());

  const schema = (name: string) => doc.components.schemas[name];
  const valid = (name: string, value: unknown) => {
    const validate = checker.getSchema(`#/components/schemas/${name}`) ?? checker.compile(schema(name));
    assert.ok(validate(value), `the draw is valid against ${name}: ${JSON.stringify(validate.errors)}`);
  };
  const accepted = (r: { status: number; text: string }, what: string) =>
    assert.ok(r.status < 400, `${what} → ${r.status} ${r.text.slice(0, 400)}`);
  const headerSchema = (path: string, method: string, name: string) =>
    doc.paths[path][method].parameters.find((p: { in: string; name: string }) => p.in === 'header' && p.name === name).schema;

  test(`a create, then an update, drawn from TemplateCreateInput and TemplateUpdateInput are accepted (${RUNS} cases)`, async () => {
    const create = arbitraryOf(schema('TemplateCreateInput'), doc, {
      // Stated in words: "" or the id of a registry auth of the owner's.
      containerRegistryAuthId: fc.constant(''),
    }).filter(fits);
    const sentBack = [
      'id',
      'category',
      'isServerless',
      'isPlatform',
      'earned',
      'runtimeInMin',
      'revision',
      'createdAt',
      'updatedAt',
      'ownerName',
    ];
    const update = arbitraryOf(schema('TemplateUpdateInput'), doc, {
      containerRegistryAuthId: fc.constantFrom('', null),
      // Stated in words: a read-only or fixed field is accepted back only with its current value.
      ...Object.fromEntries(sentBack.map((field) => [field, null])),
    }).filter(fits);
    const idempotencyKey = fc.option(arbitraryOf(headerSchema('/v1/templates', 'post', 'idempotency-key'), doc), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(create, update, idempotencyKey, async (body, change, key) => {
        valid('TemplateCreateInput', body);
        valid('TemplateUpdateInput', change);
        // Each case its own account: names are unique per owner (a 409, which is not a 400, but not this test's point).
        const owner = await h.key(`owner-${accounts++}`);
        const headers: Record<string, string> = key === undefined ? {} : { 'idempotency-key': key as string };
        const created = await h.call('POST', '/v1/templates', { key: owner, body, headers });
        accepted(created, `create ${JSON.stringify(body).slice(0, 300)} with Idempotency-Key ${JSON.stringify(key)}`);
        const updated = await h.call('PATCH', `/v1/templates/${created.body.id}`, { key: owner, body: change });
        accepted(updated, `update ${JSON.stringify(change).slice(0, 300)}`);
        await h.call('DELETE', `/v1/templates/${created.body.id}`, { key: owner });
      }),
      { numRuns: RUNS, seed: 20261127 },
    );
  });

  test(`registry auths, secrets and usage reports drawn from their schemas are accepted (${RUNS} cases)`, async () => {
    const auth = arbitraryOf(schema('ContainerRegistryAuthCreateInput'), doc).filter(fits);
    const secret = arbitraryOf(schema('SecretInput'), doc).filter(fits);
    const secretName = arbitraryOf(doc.paths['/v1/secrets/{name}'].put.parameters.find((p: Json) => p.in === 'path').schema, doc);
    const usage = arbitraryOf(schema('UsageReport'), doc);
    const owner = await h.key('credentials');
    const template = (await h.call('POST', '/v1/templates', { key: owner, body: { name: 'used', imageName: 'ubuntu' } })).body;
    let n = 0;
    await fc.assert(
      fc.asyncProperty(auth, secret, secretName, usage, async (a, s, name, u) => {
        valid('ContainerRegistryAuthCreateInput', a);
        valid('SecretInput', s);
        valid('UsageReport', u);
        const made = await h.call('POST', '/v1/containerregistryauth', { key: owner, body: a });
        // Names are unique per account: a 409 is the answer to a name drawn twice.
        assert.ok(
          made.status < 400 || made.status === 409,
          `registry auth ${JSON.stringify(a).slice(0, 300)} → ${made.status} ${made.text}`,
        );
        if (made.status < 400) await h.call('DELETE', `/v1/containerregistryauth/${made.body.id}`, { key: owner });
        const put = await h.call('PUT', `/v1/secrets/${encodeURIComponent(name as string)}`, { key: owner, body: s });
        accepted(put, `secret ${name} ${JSON.stringify(s).slice(0, 200)}`);
        await h.call('DELETE', `/v1/secrets/${encodeURIComponent(name as string)}`, { key: owner });
        // A usageId counts once: each case's own (a reuse with other values is a 409, stated in words).
        const report = { ...(u as object), usageId: `${(u as { usageId: string }).usageId.slice(0, 100)}.${n++}` };
        accepted(
          await h.call('POST', `/v1/templates/${template.id}/usage`, { key: platform, body: report }),
          `usage ${JSON.stringify(report)}`,
        );
      }),
      { numRuns: RUNS, seed: 20261128 },
    );
  });
});
