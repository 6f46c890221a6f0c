import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { dialectFor } from '../../src/store/dialect.ts';
import { forEachDialect, type Harness, startHarness } from '../support/harness.ts';

// Conditional requests (RFC 9110 §13), seen from a client: If-None-Match on a read answers 304 with the ETag and no
// body while the template is at a revision it names (weak comparison, lists, "*"), HEAD alike; on a write it is a 412.

forEachDialect('conditional reads and writes', (dialect) => {
  let h: Harness;
  let alice: string;
  let bob: string;
  let id: string;

  before(async () => {
    h = await startHarness(dialect);
    alice = await h.key('alice');
    bob = await h.key('bob');
    id = (await h.call('POST', '/v1/templates', { key: alice, body: { name: 'polled', imageName: 'ubuntu', readme: 'x'.repeat(3000) } }))
      .body.id;
  });
  after(() => h.close());

  const get = (ifNoneMatch: string | undefined, method: 'GET' | 'HEAD' = 'GET', key = alice) =>
    h.call(method, `/v1/templates/${id}`, { key, headers: ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch } });

  test('a read naming the current ETag is a 304 with the ETag and no body; strong, weak, in a list or "*"', async () => {
    const first = await get(undefined);
    assert.equal(first.status, 200);
    assert.equal(first.headers.etag, '"r1"');
    for (const header of ['"r1"', 'W/"r1"', '"r7", "r1"', ' , "r0",,W/"r1" ', '*']) {
      const r = await get(header);
      assert.equal(r.status, 304, header);
      assert.equal(r.headers.etag, '"r1"', header);
      assert.equal(r.text, '', header);
      assert.equal(r.headers['content-type'], undefined, header);
    }
    // A tag of another revision, or another's opaque text, is not a match: the whole template is sent.
    for (const header of ['"r2"', 'W/"r11"', '"r1-gzip"', '"R1"', '""']) {
      const r = await get(header);
      assert.equal(r.status, 200, header);
      assert.deepEqual(r.body, first.body, header);
    }
  });

  test('HEAD agrees with GET: 304 when If-None-Match names the revision, else 200 with the ETag and no body', async () => {
    const head = await get(undefined, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers.etag, '"r1"');
    assert.equal(head.text, '');
    assert.equal(Number(head.headers['content-length']), Buffer.byteLength((await get(undefined)).text));
    const notModified = await get('"r1"', 'HEAD');
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.etag, '"r1"');
    assert.equal((await get('"r0"', 'HEAD')).status, 200);
  });

  test('a change moves the ETag: the old one gets the new template, the new one a 304', async () => {
    const updated = await h.call('PATCH', `/v1/templates/${id}`, { key: alice, body: { readme: 'changed' } });
    assert.equal(updated.headers.etag, '"r2"');
    const stale = await get('"r1"');
    assert.equal(stale.status, 200);
    assert.equal(stale.body.readme, 'changed');
    assert.equal(stale.headers.etag, '"r2"');
    assert.equal((await get('"r1", "r2"')).status, 304);
  });

  test("an image check moves the ETag, not the revision: a poller sees the result; a write's If-Match still holds", async () => {
    const made = await h.call('POST', '/v1/templates', { key: alice, body: { name: 'checked', imageName: 'ubuntu' } });
    const before = made.headers.etag as string;
    assert.equal(before, `"r1"`);
    // A check's result, as the checker writes it (any writer: the read cache hears of it from the database).
    const raw = new Kysely<any>({ dialect: dialectFor(h.database.url).kysely });
    try {
      await sql`update templates set image_check_status = 'verified', image_checked_at = ${'2026-11-27T12:00:00.000Z'} where id = ${made.body.id}`.execute(
        raw,
      );
    } finally {
      await raw.destroy();
    }
    const polled = await h.call('GET', `/v1/templates/${made.body.id}`, { key: alice, headers: { 'if-none-match': before } });
    assert.equal(polled.status, 200, 'the old tag no longer names what is served');
    assert.equal(polled.body.imageCheck.status, 'verified');
    assert.equal(polled.body.revision, 1);
    const after = polled.headers.etag as string;
    assert.match(after, /^"r1\.v[0-9a-z]+"$/);
    assert.equal((await h.call('GET', `/v1/templates/${made.body.id}`, { key: alice, headers: { 'if-none-match': after } })).status, 304);
    // A write compares revisions: the tag from before the check, and the one after, both name revision 1.
    const patched = await h.call('PATCH', `/v1/templates/${made.body.id}`, {
      key: alice,
      body: { readme: 'a' },
      headers: { 'if-match': before },
    });
    assert.equal(patched.status, 200, patched.text);
    const stale = await h.call('PATCH', `/v1/templates/${made.body.id}`, {
      key: alice,
      body: { readme: 'b' },
      headers: { 'if-match': after },
    });
    assert.equal(stale.status, 412, 'revision 1 is gone');
  });

  test('a template the caller may not see is a 404 whatever If-None-Match says; a malformed header is a 400 naming it', async () => {
    for (const header of ['*', '"r2"']) {
      const r = await get(header, 'GET', bob);
      assert.equal(r.status, 404, header);
      assert.equal(r.headers.etag, undefined);
    }
    for (const header of ['r2', '"r2" "r3"', '"r2"\u0000', '**']) {
      const r = await get(header);
      assert.equal(r.status, 400, header);
      assert.deepEqual(r.body.errors, [{ in: 'header', path: '/if-none-match', message: 'is not a list of entity tags' }], header);
    }
    const long = await get(`"${'r'.repeat(1030)}"`);
    assert.equal(long.status, 400);
    assert.deepEqual(long.body.errors, [{ in: 'header', path: '/if-none-match', message: 'must be at most 1024 characters' }]);
  });

  test('If-None-Match on a write: naming the current revision, or "*", fails it with a 412; nothing changes', async () => {
    const current = (await get(undefined)).body;
    for (const header of ['"r2"', 'W/"r2"', '*']) {
      const r = await h.call('PATCH', `/v1/templates/${id}`, { key: alice, body: { readme: 'no' }, headers: { 'if-none-match': header } });
      assert.equal(r.status, 412, header);
      assert.equal(r.body.detail, 'The template is at revision 2, which If-None-Match names; read it again.');
    }
    const del = await h.call('DELETE', `/v1/templates/${id}`, { key: alice, headers: { 'if-none-match': '"r2"' } });
    assert.equal(del.status, 412);
    assert.deepEqual((await get(undefined)).body, current);
    // If-Match is evaluated first; both must hold.
    const both = await h.call('PATCH', `/v1/templates/${id}`, {
      key: alice,
      body: { readme: 'yes' },
      headers: { 'if-match': '"r2"', 'if-none-match': '"r1"' },
    });
    assert.equal(both.status, 200);
    assert.equal(both.headers.etag, '"r3"');
    const stale = await h.call('PATCH', `/v1/templates/${id}`, {
      key: alice,
      body: { readme: 'no' },
      headers: { 'if-match': '"r2"', 'if-none-match': '"r3"' },
    });
    assert.equal(stale.status, 412);
    assert.equal(stale.body.detail, 'The template is at revision 3, which If-Match does not name; read it again.');
  });
});

test('the web UI answers a revalidation of its files as RFC 9110 says: weak tags and lists match too', async () => {
  const h = await startHarness('sqlite');
  try {
    const index = await h.call('GET', '/');
    if (index.status === 503) return; // no UI build here: test/ui/serve.test.ts covers the assets with one
    const etag = String(index.headers.etag);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*'])
      assert.equal((await h.call('GET', '/', { headers: { 'if-none-match': header } })).status, 304);
    assert.equal((await h.call('GET', '/', { headers: { 'if-none-match': '"other"' } })).status, 200);
  } finally {
    await h.close();
  }
});
