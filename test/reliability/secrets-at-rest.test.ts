import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';

// A registry password is in plain text nowhere the service keeps things: not in the database (the SQLite file with its
// WAL, or a pg_dump), not in revisions, diffs, releases or the webhooks' outbox. Only a platform key reads it back.

const PASSWORD = 'plaintext-sentinel-0d1f6e-password';

forEachDialect('registry passwords at rest', (dialect) => {
  let h: Harness;
  let alice: string;
  let platform: string;
  let authId: string;
  let templateId: string;
  let endpointId: string;

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    platform = await h.key('ops', 'platform');
    const auth = await h.call('POST', '/v1/containerregistryauth', {
      key: alice,
      body: { name: 'private registry', username: 'robot', password: PASSWORD },
    });
    authId = auth.body.id;
    // A Serverless template bound to an endpoint, given the auth by an update: a revision, a diff, a release, a webhook.
    const t = await h.call('POST', '/v1/templates', { key: alice, body: templateBody({ isServerless: true }) });
    templateId = t.body.id;
    endpointId = (await h.call('POST', '/v1/endpoints', { key: alice, body: { name: 'e', templateId } })).body.id;
    const updated = await h.call('PATCH', `/v1/templates/${templateId}`, { key: alice, body: { containerRegistryAuthId: authId } });
    assert.equal(updated.status, 200, updated.text);
    assert.equal((await h.call('GET', `/v1/containerregistryauth/${authId}/credentials`, { key: platform })).body.password, PASSWORD);
  });
  after(() => h.close());

  test('revisions, their diffs, releases and the webhook outbox name the auth by id, never its password', async () => {
    const revisions = await h.call('GET', `/v1/templates/${templateId}/revisions`, { key: alice });
    assert.deepEqual(revisions.body[0].diff, [{ field: 'containerRegistryAuthId', from: '', to: authId }]);
    const releases = await h.call('GET', `/v1/endpoints/${endpointId}/releases`, { key: alice });
    assert.deepEqual(releases.body[0].diff, revisions.body[0].diff);
    const raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
    try {
      const outbox = (await sql<{ payload: string }>`select payload from outbox`.execute(raw)).rows;
      assert.equal(outbox.length, 1);
      assert.equal(JSON.parse(outbox[0]?.payload as string).data.template.containerRegistryAuthId, authId);
      for (const text of [revisions.text, releases.text, ...outbox.map((r) => r.payload)]) assert.equal(text.includes(PASSWORD), false);
      // What is stored is a sealed value, bound to its row.
      const [row] = (await sql<{ password: string }>`select password from registry_auths where id = ${authId}`.execute(raw)).rows;
      assert.match(row?.password ?? '', /^v1\.[A-Za-z0-9_-]{8}\./);
    } finally {
      await raw.destroy();
    }
  });

  if (dialect === 'sqlite') {
    test('the SQLite file, its WAL and shared memory hold no plain password', () => {
      const dir = dirname(h.database.url.replace(/^sqlite:/, ''));
      const files = readdirSync(dir);
      assert.ok(files.includes('podplate.db'));
      const everything = Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
      assert.ok(everything.includes(Buffer.from('registry_auths')), 'the table is there');
      assert.equal(everything.includes(Buffer.from(PASSWORD)), false);
      assert.equal(everything.includes(Buffer.from(PASSWORD, 'utf16le')), false);
    });
  } else {
    test('a pg_dump of the database holds no plain password', () => {
      const url = new URL(h.database.url);
      const schema = /search_path=(\S+)/.exec(url.searchParams.get('options') ?? '')?.[1] as string;
      url.searchParams.delete('options');
      const dump = execFileSync('/usr/bin/pg_dump', ['--dbname', url.toString(), '--schema', schema], {
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      });
      assert.match(dump, /COPY \S+\.registry_auths /);
      assert.ok(dump.includes(authId), 'the auth is in the dump');
      assert.equal(dump.includes(PASSWORD), false);
    });
  }

  test('a sealed password moved to another row does not open there', async () => {
    const other = await h.call('POST', '/v1/containerregistryauth', { key: alice, body: { name: 'other', username: 'u', password: 'x' } });
    const raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
    try {
      await sql`update registry_auths set password = (select password from registry_auths where id = ${authId}) where id = ${other.body.id}`.execute(
        raw,
      );
    } finally {
      await raw.destroy();
    }
    const r = await h.call('GET', `/v1/containerregistryauth/${other.body.id}/credentials`, { key: platform });
    assert.equal(r.status, 500);
    assert.equal(r.text.includes(PASSWORD), false);
  });
});
