import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Keyring, newKeyText } from '../../src/sealing/keyring.ts';
import { type Database, DIALECTS, type DialectName, freshDatabase, type Harness, openHarness, startHarness } from '../support/harness.ts';
import { type Install, observe, populate } from '../support/install.ts';
import { BIN } from '../support/process.ts';

// podplate export and import, run as an operator would, between the two databases: every key gets the same answers
// from the copy as from the original, and a stream that is not whole imports nothing.

const dir = mkdtempSync(join(tmpdir(), 'podplate-transfer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function podplate(args: string[], databaseUrl: string, input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Secrets travel sealed, as stored: the copy opens them with the same SECRETS_KEY as the original (docs/operations.md).
const keyring = Keyring.fromText(newKeyText());

let files = 0;
function exportOf(database: Database): string {
  const file = join(dir, `export-${files++}.ndjson`);
  const r = podplate(['export', '--output', file], database.url);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Exported \d+ templates/);
  return file;
}

async function importInto(dialect: DialectName, file: string): Promise<Database> {
  const database = await freshDatabase(dialect);
  const r = podplate(['import', '--input', file], database.url);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Imported \d+ templates/);
  return database;
}

/** The first answer that differs, if any, with its request. */
function assertSameAnswers(actual: string[], expected: string[], what: string): void {
  const differs = expected.findIndex((answer, i) => actual[i] !== answer);
  if (differs >= 0) assert.equal(actual[differs], expected[differs], `${what}: answer ${differs} differs`);
  assert.equal(actual.length, expected.length, `${what}: as many answers`);
}

/** The rows of an export, sorted: two exports of one install hold the same rows, whatever order a database reads them in. */
const rowsOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('['))
    .sort();

async function assertStillWorks(h: Harness, install: Install): Promise<void> {
  const created = await h.call('POST', '/v1/templates', { key: install.keys.alice, body: { name: 'after the move', imageName: 'ubuntu' } });
  assert.equal(created.status, 200, created.text);
  const newest = await h.call('GET', '/v1/templates?limit=1', { key: install.keys.alice });
  assert.equal(newest.body[0].id, created.body.id, 'a new template comes first: the sequence went on past the imported ones');
  // The search index is not exported: the importing database built it as the rows arrived (a rare term reads it).
  const imported = await h.call('GET', `/v1/templates/${install.templateIds[1]}`, { key: install.keys.alice });
  const found = await h.call('GET', `/v1/templates?includePublicTemplates=true&q=${encodeURIComponent(imported.body.name.toUpperCase())}`, {
    key: install.keys.alice,
  });
  assert.deepEqual(
    found.body.map((t: { id: string }) => t.id),
    [install.templateIds[1]],
    'an imported template is found by its name',
  );
  const replay = await h.call('POST', '/v1/templates', {
    key: install.keys.alice,
    body: { name: 'kept response', imageName: 'ubuntu' },
    headers: { 'idempotency-key': 'create-kept-1' },
  });
  assert.equal(replay.status, 200);
  assert.equal(replay.headers['idempotent-replayed'], 'true', 'a kept response is replayed');
  const usage = await h.call('POST', `/v1/templates/${install.templateIds[1]}/usage`, {
    key: install.keys.ops,
    body: { usageId: 'pod-0', runtimeInMin: 90, earned: 1.25 },
  });
  assert.ok(usage.status < 300, usage.text);
  const counted = await h.call('GET', `/v1/templates/${install.templateIds[1]}`, { key: install.keys.alice });
  assert.equal(counted.body.runtimeInMin, 90, 'a usage report seen before the move counts once');
}

const postgres = DIALECTS.includes('postgres');
const directions: [string, DialectName, DialectName[]][] = [
  ['SQLite → PostgreSQL → SQLite', 'sqlite', ['postgres', 'sqlite']],
  ['PostgreSQL → SQLite', 'postgres', ['sqlite']],
  ['SQLite → SQLite', 'sqlite', ['sqlite']],
];

for (const [title, from, path] of directions) {
  const needsPostgres = from === 'postgres' || path.includes('postgres');
  describe(`export and import, ${title}`, { skip: needsPostgres && !postgres ? 'TEST_DATABASE_URL is not set' : false }, () => {
    let source: Harness;
    let install: Install;
    let expected: string[];
    before(async () => {
      source = await startHarness(from, { keyring });
      install = await populate(source);
      expected = await observe(source, install);
    });
    after(() => source?.close());

    test('every key gets the same answers from each copy; the rows are the same; the copy takes writes', async () => {
      let file = exportOf(source.database);
      const rows = rowsOf(file);
      assert.ok(rows.length > 50);
      const text = readFileSync(file, 'utf8');
      assert.match(text, /\{"table":"secrets"/, 'secrets travel');
      assert.equal(text.includes('hf-value-of-alice'), false, 'as ciphertext, never in plain text');
      assert.ok(expected.some((answer) => answer.startsWith('resolve for bob 200') && answer.includes('hf-value-of-bob')));
      for (const [hop, dialect] of path.entries()) {
        const h = await openHarness(await importInto(dialect, file), { keyring });
        try {
          assertSameAnswers(await observe(h, install), expected, `after hop ${hop + 1} (${dialect})`);
          file = exportOf(h.database);
          assert.deepEqual(rowsOf(file), rows, 'an export of the copy holds the same rows');
          if (hop === path.length - 1) await assertStillWorks(h, install);
        } finally {
          await h.close();
        }
      }
    });
  });
}

const tableAt = (ls: string[], name: string) => ls.findIndex((l) => l.startsWith(`{"table":"${name}"`));
const accountId = (ls: string[], name: string) =>
  (ls.slice(tableAt(ls, 'accounts') + 1).map((l) => JSON.parse(l)) as string[][]).find((row) => row[1] === name)?.[0] as string;

/** Edits, in place, the first row of `table` that `pick` chooses. */
function editRow(
  ls: string[],
  table: string,
  pick: (value: (column: string) => unknown) => boolean,
  edit: (set: (column: string, v: unknown) => void, value: (column: string) => unknown) => void,
): void {
  const at = tableAt(ls, table);
  const { columns, rows } = JSON.parse(ls[at] as string) as { columns: string[]; rows: number };
  for (let i = at + 1; i <= at + rows; i++) {
    const row = JSON.parse(ls[i] as string) as unknown[];
    const value = (column: string) => row[columns.indexOf(column)];
    if (!pick(value)) continue;
    edit((column, v) => {
      row[columns.indexOf(column)] = v;
    }, value);
    ls[i] = JSON.stringify(row);
    return;
  }
  throw new Error(`no row of ${table} to edit`);
}

describe('import refuses what it must, and changes nothing', () => {
  let source: Harness;
  let file: string;
  let lines: string[];
  before(async () => {
    source = await startHarness('sqlite');
    await populate(source);
    file = exportOf(source.database);
    lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  });
  after(() => source?.close());

  for (const dialect of DIALECTS) {
    test(`a database that holds data [${dialect}]`, async () => {
      const target = await startHarness(dialect);
      try {
        const key = await target.key('existing');
        const r = podplate(['import', '--input', file], target.database.url);
        assert.equal(r.code, 1);
        assert.match(r.stderr, /already holds data \(in accounts, api_keys\).*Nothing was changed/);
        const keys = await target.podplate.keys.list();
        assert.deepEqual(
          keys.map((k) => k.account),
          ['existing'],
        );
        assert.equal((await target.call('GET', '/v1/templates', { key })).body.length, 0);
      } finally {
        await target.close();
      }
    });

    const broken: [string, () => string, RegExp][] = [
      [
        'cut off after a row',
        () => lines.slice(0, 12).join('\n'),
        /line 12: the stream ends here without its end line \(in \w+, after \d+ of its \d+ rows\): it is truncated/,
      ],
      ['cut off mid-line', () => `${lines.slice(0, 10).join('\n')}\n${(lines[10] as string).slice(0, 20)}`, /line 11: not valid JSON/],
      ['without its end line', () => lines.slice(0, -1).join('\n'), /the stream ends here without its end line/],
      ['a row missing', () => [...lines.slice(0, 10), ...lines.slice(11)].join('\n'), /announced \d+ rows but has \d+/],
      [
        'a value of the wrong kind',
        () => lines.map((l, i) => (i === 3 ? l.replace(/"\d{4}-[^"]+Z"/, '"yesterday"') : l)).join('\n'),
        /line 4: accounts.created_at must be a timestamp/,
      ],
      [
        'a row the database refuses (a duplicate id)',
        () => {
          const at = lines.findIndex((l) => l.startsWith('{"table":"accounts"'));
          const copy = [...lines];
          copy[at] = (copy[at] as string).replace(/"rows":(\d+)/, (_, n) => `"rows":${Number(n) + 1}`);
          copy.splice(at + 2, 0, lines[at + 1] as string);
          const end = copy.length - 1;
          copy[end] = (copy[end] as string).replace(/"rows":(\d+)/, (_, n) => `"rows":${Number(n) + 1}`);
          return copy.join('\n');
        },
        /line 4: the database refused this row of accounts/,
      ],
      [
        'another format version',
        () => [lines[0]?.replace('"version":1', '"version":2'), ...lines.slice(1)].join('\n'),
        /line 1: format version 2/,
      ],
      ['not an export', () => '{"hello":"world"}\n', /line 1: not a Podplate export/],
      // What the foreign keys don't hold (operations/references.ts): found by an attacker's stream that imported whole.
      [
        "a template naming another account's registry auth",
        () => {
          const copy = [...lines];
          const alice = accountId(copy, 'alice');
          const authId = 'aliceauth0000000';
          const at = tableAt(copy, 'registry_auths');
          copy[at] = (copy[at] as string).replace(/"rows":0/, '"rows":1');
          copy.splice(at + 1, 0, JSON.stringify([1, authId, alice, 'ghcr', 'alice', 'v1.sealed', '2026-11-24T00:00:00.000Z', 'ghcr']));
          const end = copy.length - 1;
          copy[end] = (copy[end] as string).replace(/"rows":(\d+)/, (_, n) => `"rows":${Number(n) + 1}`);
          editRow(
            copy,
            'templates',
            (value) => value('owner_id') === accountId(copy, 'bob'),
            (set) => set('container_registry_auth_id', authId),
          );
          return copy.join('\n');
        },
        /line \d+: the template names registry auth aliceauth0000000 \(line \d+\), which belongs to another account/,
      ],
      [
        'a template bound to an endpoint the stream does not hold',
        () => {
          const copy = [...lines];
          editRow(
            copy,
            'templates',
            (value) => value('endpoint_id') === null,
            (set) => set('endpoint_id', 'nosuchendpoint00'),
          );
          return copy.join('\n');
        },
        /line \d+: template \w+ is bound to endpoint nosuchendpoint00, which the stream does not hold/,
      ],
      [
        'an endpoint whose template has another owner',
        () => {
          const copy = [...lines];
          editRow(
            copy,
            'endpoints',
            () => true,
            (set, value) => set('owner_id', accountId(copy, value('owner_id') === accountId(copy, 'bob') ? 'alice' : 'bob')),
          );
          return copy.join('\n');
        },
        /line \d+: endpoint \w+ and its template \w+ \(line \d+\) have different owners/,
      ],
      // A template row's values as the API would take them (domain/template.ts), checked by import too.
      [
        'a template of a category the API refuses',
        () => {
          const copy = [...lines];
          editRow(
            copy,
            'templates',
            () => true,
            (set) => set('category', 'QUANTUM'),
          );
          return copy.join('\n');
        },
        /line \d+: template \w+ holds what the API refuses: \/category must be one of NVIDIA, AMD, CPU/,
      ],
      [
        'a template whose image the API refuses',
        () => {
          const copy = [...lines];
          editRow(
            copy,
            'templates',
            () => true,
            (set) => set('image_name', 'RunPod/PyTorch'),
          );
          return copy.join('\n');
        },
        /line \d+: template \w+ holds what the API refuses: \/imageName repository names must be lowercase/,
      ],
      [
        'a template whose env is not a JSON map',
        () => {
          const copy = [...lines];
          editRow(
            copy,
            'templates',
            () => true,
            (set) => set('env', '{"A": 1'),
          );
          return copy.join('\n');
        },
        /line \d+: templates.env is not JSON text/,
      ],
      [
        'a template whose flag is neither 0 nor 1',
        () => {
          const copy = [...lines];
          editRow(
            copy,
            'templates',
            () => true,
            (set) => set('is_public', 7),
          );
          return copy.join('\n');
        },
        /line \d+: templates.is_public must be 0 or 1/,
      ],
      [
        'a revision whose snapshot the API refuses',
        () => {
          const copy = [...lines];
          editRow(
            copy,
            'template_revisions',
            () => true,
            (set, value) => set('snapshot', JSON.stringify({ ...JSON.parse(value('snapshot') as string), containerDiskInGb: 0 })),
          );
          return copy.join('\n');
        },
        /line \d+: revision \d+ of template \w+ holds what the API refuses: \/containerDiskInGb must be at least 1/,
      ],
      [
        "a line longer than any export's",
        () => [lines[0], lines[1], `${' '.repeat(17 * 1024 * 1024)}[]`, ...lines.slice(2)].join('\n'),
        /line 3: a line longer than 16,777,216 characters: no export has one/,
      ],
    ];
    for (const [what, make, message] of broken) {
      test(`a stream ${what} imports nothing and names the line [${dialect}]`, async () => {
        const target = await freshDatabase(dialect);
        let h: Harness | undefined;
        try {
          const input = join(dir, `broken-${files++}.ndjson`);
          writeFileSync(input, make());
          const r = podplate(['import', '--input', input], target.url);
          assert.equal(r.code, 1, r.stderr);
          // (A progress line may come first, on a busy machine.)
          assert.match(r.stderr, /^podplate: the import was refused, and nothing was imported: line \d+: /m);
          assert.match(r.stderr, message);
          h = await openHarness(target);
          assert.deepEqual(await h.podplate.keys.list(), [], 'nothing was imported');
        } finally {
          if (h) await h.close();
          else await target.drop();
        }
      });
    }
  }

  for (const dialect of DIALECTS) {
    test(`a stored body that lies is rebuilt from the columns: GET answers what the row holds [${dialect}]`, async () => {
      const copy = [...lines];
      let id = '';
      editRow(
        copy,
        'templates',
        (value) => value('is_public') === 1,
        (set, value) => {
          id = value('id') as string;
          const told = JSON.parse(value('body') as string);
          set('body', JSON.stringify({ ...told, name: 'not what the row says', imageName: 'evil/miner:latest', isPublic: false }));
          set('search', 'pytorch notebook');
        },
      );
      const input = join(dir, `lying-${files++}.ndjson`);
      writeFileSync(input, copy.join('\n'));
      const target = await freshDatabase(dialect);
      const r = podplate(['import', '--input', input], target.url);
      assert.equal(r.code, 0, r.stderr);
      const h = await openHarness(target);
      try {
        const row = JSON.parse(lines.find((l) => l.includes(`"${id}"`) && l.startsWith('[')) as string) as unknown[];
        const key = await h.key('reader');
        const got = await h.call('GET', `/v1/templates/${id}?includePublicTemplates=true`, { key });
        assert.equal(got.status, 200, got.text);
        assert.ok(row.includes(got.body.name), "the name is the column's");
        assert.ok(row.includes(got.body.imageName), "the image is the column's");
        assert.equal(got.body.isPublic, true);
        const found = await h.call('GET', '/v1/templates?includePublicTemplates=true&q=notebook&limit=1000', { key });
        assert.ok(!found.body.some((t: { id: string }) => t.id === id), 'search is rebuilt from the columns too');
      } finally {
        await h.close();
      }
    });
  }

  test('an export refuses a database whose schema is not up to date', async () => {
    const empty = await freshDatabase('sqlite');
    try {
      const r = podplate(['export'], empty.url);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /schema is not up to date \(\d+ migration\(s\) to run, the next 0001-initial\): run podplate migrate first/);
    } finally {
      await empty.drop();
    }
  });

  test('an export never overwrites a file', () => {
    const r = podplate(['export', '--output', file], source.database.url);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /exists; an export never overwrites a file/);
    assert.ok(rowsOf(file).length > 50, 'the file is as it was');
  });

  test('stdout and stdin, as in a pipe', async () => {
    const out = podplate(['export'], source.database.url);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(
      out.stdout
        .split('\n')
        .filter((line) => line.startsWith('['))
        .sort(),
      rowsOf(file),
    );
    const target = await freshDatabase('sqlite');
    try {
      const r = podplate(['import'], target.url, out.stdout);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /Imported 27 templates/);
    } finally {
      await target.drop();
    }
  });
});
