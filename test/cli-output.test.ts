import assert from 'node:assert/strict';
import { test } from 'node:test';
import { releaseShape, table } from '../src/cli/output.ts';
import type { Release } from '../src/client/index.ts';

// How the CLI words a release's env changes: the variables by name, never their values; and who is shown the webhook.

const release = (diff: Release['diff'], delivery?: Release['delivery']): Release => ({
  id: 'rel_1',
  endpointId: 'ep_1',
  version: 2,
  templateId: 't',
  templateRevision: 2,
  diff,
  status: 'pending',
  workersUpdated: 0,
  workersTotal: 0,
  createdAt: '2026-11-27T00:00:00.000Z',
  updatedAt: '2026-11-27T00:00:00.000Z',
  imageDigest: null,
  ...(delivery ? { delivery } : {}),
});

test("env changes name their variables, those named like an object's properties too, and no value", () => {
  const r = release([
    { field: 'env', from: { constructor: 'x', KEEP: 'k', MODEL: 'a' }, to: { toString: 's3cret', KEEP: 'k', MODEL: 'b' } },
  ]);
  const shape = releaseShape([r]);
  const changes = shape.row(r)[shape.columns.findIndex((c) => c.header === 'CHANGES')];
  assert.equal(changes, 'env: removed constructor, changed MODEL, added toString');
});

test('the WEBHOOK column is there only when the API showed the delivery (a platform key)', () => {
  const headers = (r: Release) => releaseShape([r]).columns.map((c) => c.header);
  assert.equal(headers(release([])).includes('WEBHOOK'), false);
  assert.equal(
    headers(release([], { attempts: 1, lastError: null, nextAttemptAt: '2026-11-27T00:00:00.000Z', deliveredAt: null })).includes(
      'WEBHOOK',
    ),
    true,
  );
});

test('a table keeps its columns whatever the cells hold: escapes are measured as printed, a newline stays in its cell', () => {
  const text = table(
    [{ header: 'NAME' }, { header: 'VALUE' }, { header: 'END' }],
    [
      ['plain', 'x', '1'],
      ['esc\x1b[31mred', '{{ RUNPOD_SECRET_a }}\n', '2'],
      ['tab\there', 'rtl\u202eevil', '3'],
    ],
    { width: 200 },
  );
  const lines = text.split('\n');
  assert.equal(lines.length, 4, text);
  const ends = lines.map((l) => l.lastIndexOf(' ') + 1);
  assert.equal(new Set(ends).size, 1, `the last column starts at one place:\n${text}`);
  assert.match(text, /esc\\x1b\[31mred/);
  assert.match(text, /\{\{ RUNPOD_SECRET_a \}\}\\n/);
  assert.match(text, /tab\\there/);
});
