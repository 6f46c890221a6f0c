import SQLite from 'better-sqlite3';
import pg from 'pg';
import { contentOf } from '../src/domain/revision.ts';
import { templateJson } from '../src/domain/template.ts';
import { toRow } from '../src/store/templates/columns.ts';
import { catalogueTemplate, ownerId, ownerName, ownersOf, PLATFORM_OWNERS } from './catalogue.ts';
import { sampleTemplate } from './sample.ts';

// Seeds the catalogue (catalogue.ts: many owners, a realistic mix) in bulk, straight into the database: a million rows
// in a minute or two, not through the API. Each row is exactly what the service would write (`toRow`, which every
// write of the store goes through): its columns, its `search` text and its `body`.

const COLUMNS = `(id, owner_id, endpoint_id, name, image_name, category, container_disk_in_gb, volume_in_gb, volume_mount_path,
  container_registry_auth_id, docker_entrypoint, docker_start_cmd, env, ports, readme, is_public, is_platform, is_serverless,
  earned, runtime_in_min, revision, created_at, updated_at, search, body)`;

const idOf = (n: number) => `seed${String(n).padStart(12, '0')}`;

/** The stored representation of every seeded row, with its id and name to fill in. */
const bodyOf = (at: string) => templateJson(sampleTemplate('\u0000ID\u0000', '\u0000NAME\u0000', at));
const ID = JSON.stringify('\u0000ID\u0000');
const NAME = JSON.stringify('\u0000NAME\u0000');

/**
 * The sample template (sample.ts) over and over, each row a public template of `ownerId` with its own id and name:
 * the simple shapes the list-plan tests build.
 */
export async function seedTemplates(
  databaseUrl: string,
  ownerId: string,
  from: number,
  to: number,
  options: { platform?: boolean } = {},
): Promise<void> {
  const at = new Date().toISOString();
  const platform = options.platform ? 1 : 0;
  const body = options.platform ? bodyOf(at).replace('"isPlatform":false', '"isPlatform":true') : bodyOf(at);
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    const insert = db.prepare(
      `insert into templates ${COLUMNS} values (?, ?, null, ?, 'runpod/pytorch:2.1.0', 'NVIDIA', 50, 20, '/workspace', '', '[]', '[]',
       '{"HF_HOME":"/workspace/hf"}', '["8888/http","22/tcp"]', '# Seeded', 1, ${platform}, 0, 0, 0, 1, ?, ?, ?, ?)`,
    );
    const batch = db.transaction((start: number, end: number) => {
      for (let n = start; n < end; n++) {
        insert.run(
          idOf(n),
          ownerId,
          `seeded ${n}`,
          at,
          at,
          `seeded ${n}\nrunpod/pytorch:2.1.0`,
          body.replace(ID, `"${idOf(n)}"`).replace(NAME, `"seeded ${n}"`),
        );
      }
    });
    for (let start = from; start < to; start += 50_000) batch(start, Math.min(to, start + 50_000));
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into templates ${COLUMNS}
       select 'seed' || lpad(g::text, 12, '0'), $1, null, 'seeded ' || g, 'runpod/pytorch:2.1.0', 'NVIDIA', 50, 20,
         '/workspace', '', '[]', '[]', '{"HF_HOME":"/workspace/hf"}', '["8888/http","22/tcp"]', '# Seeded', 1, ${platform}, 0, 0, 0, 1, $2, $2,
         'seeded ' || g || chr(10) || 'runpod/pytorch:2.1.0',
         replace(replace($5, $6, '"seed' || lpad(g::text, 12, '0') || '"'), $7, '"seeded ' || g || '"')
       from generate_series($3::bigint, $4::bigint - 1) g`,
      [ownerId, at, from, to, body, ID, NAME],
    );
    await client.query('analyze templates');
  } finally {
    await client.end();
  }
}

const TEMPLATE_INSERT = [
  'id',
  'owner_id',
  'endpoint_id',
  'name',
  'image_name',
  'category',
  'container_disk_in_gb',
  'volume_in_gb',
  'volume_mount_path',
  'container_registry_auth_id',
  'docker_entrypoint',
  'docker_start_cmd',
  'env',
  'ports',
  'readme',
  'is_public',
  'is_platform',
  'is_serverless',
  'earned',
  'runtime_in_min',
  'revision',
  'created_at',
  'updated_at',
  'search',
  'body',
] as const;
/** PostgreSQL's array type of each column above, for `unnest`. */
const PG_ARRAYS = TEMPLATE_INSERT.map((c) =>
  /^(container_disk_in_gb|volume_in_gb|is_public|is_platform|is_serverless|revision)$/.test(c)
    ? 'integer[]'
    : c === 'runtime_in_min'
      ? 'bigint[]'
      : c === 'earned'
        ? 'double precision[]'
        : c.endsWith('_at')
          ? 'timestamptz[]'
          : 'text[]',
);
const BATCH = 5_000;

/** The accounts owning a catalogue of `total` templates: the platform's and ownersOf(total) users. */
function catalogueAccounts(total: number): [string, string, string][] {
  return [
    ...PLATFORM_OWNERS.map(({ id, name }): [string, string, string] => [id, name, 'platform']),
    ...Array.from({ length: ownersOf(total) }, (_, i): [string, string, string] => [ownerId(i), ownerName(i), 'user']),
  ];
}

/**
 * Rows `from` to `to` of the catalogue of `total` templates (and, from row 0, its owners' accounts), in batches: one
 * transaction each on SQLite, one `insert … select from unnest(…)` each on PostgreSQL. The database's triggers keep
 * what they keep for any insert: the owners' usage, the search index. Seconds taken.
 */
export async function seedCatalogue(databaseUrl: string, from: number, to: number, total: number): Promise<number> {
  const started = performance.now();
  const at = new Date(Date.parse('2026-01-01T00:00:00.000Z')).toISOString();
  const rowsOf = (start: number, end: number) =>
    Array.from({ length: end - start }, (_, i) => {
      const row = toRow({ ...catalogueTemplate(start + i, total) });
      return TEMPLATE_INSERT.map((c) => row[c]);
    });
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    if (from === 0) {
      const account = db.prepare('insert into accounts (id, name, role, created_at) values (?, ?, ?, ?)');
      db.transaction(() => {
        for (const [id, name, role] of catalogueAccounts(total)) account.run(id, name, role, at);
      })();
    }
    const insert = db.prepare(
      `insert into templates (${TEMPLATE_INSERT.join(', ')}) values (${TEMPLATE_INSERT.map(() => '?').join(', ')})`,
    );
    const batch = db.transaction((rows: unknown[][]) => {
      for (const row of rows) insert.run(row);
    });
    // The trigram table is filled in one pass after the rows (FTS5's `rebuild`, from the same `search` column):
    // a tenth of the time its trigger takes row by row, and the same index (measured at 100,000 rows: as many
    // segments and bytes, the same query times). The trigger is put back as the migration made it.
    const trigger = db.prepare(`select sql from sqlite_master where type = 'trigger' and name = 'templates_search_insert'`).get() as {
      sql: string;
    };
    db.exec('drop trigger templates_search_insert');
    try {
      for (let start = from; start < to; start += BATCH) batch(rowsOf(start, Math.min(to, start + BATCH)));
    } finally {
      db.exec(trigger.sql);
      db.exec(`insert into templates_search (templates_search) values ('rebuild')`);
      db.close();
    }
    return (performance.now() - started) / 1000;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // The trigram index is built after the rows, as the migration defines it (a GIN index grown row by row took
    // most of the time), and the table vacuumed and analyzed: the state autovacuum leaves an install in (it may be
    // off, as on this project's machine, and would otherwise run in the middle of the measurements).
    const { rows: trigram } = await client.query<{ indexdef: string }>(
      `select indexdef from pg_indexes where schemaname = current_schema() and indexname = 'templates_search_trgm'`,
    );
    await client.query('drop index templates_search_trgm');
    if (from === 0) {
      const accounts = catalogueAccounts(total);
      await client.query(
        'insert into accounts (id, name, role, created_at) select id, name, role, $4 from unnest($1::text[], $2::text[], $3::text[]) as a(id, name, role)',
        [accounts.map((a) => a[0]), accounts.map((a) => a[1]), accounts.map((a) => a[2]), at],
      );
    }
    const text = `insert into templates (${TEMPLATE_INSERT.join(', ')}) select * from unnest(${PG_ARRAYS.map((t, i) => `$${i + 1}::${t}`).join(', ')})`;
    // The next batch is drawn while the database writes the one before.
    let pending: Promise<unknown> = Promise.resolve();
    try {
      for (let start = from; start < to; start += BATCH) {
        const rows = rowsOf(start, Math.min(to, start + BATCH));
        await pending;
        pending = client.query(
          text,
          TEMPLATE_INSERT.map((_, c) => rows.map((row) => row[c])),
        );
      }
      await pending;
    } finally {
      await pending.catch(() => {});
      await client.query(`set maintenance_work_mem = '512MB'`);
      await client.query(trigram[0]?.indexdef as string);
    }
    await client.query('vacuum analyze templates');
  } finally {
    await client.end();
  }
  return (performance.now() - started) / 1000;
}

/** The first revision of rows `from` to `to` of the catalogue of `total`, as a create writes it, made by `keyId`. */
export async function seedCatalogueRevisions(databaseUrl: string, keyId: string, from: number, to: number, total: number): Promise<void> {
  const rowsOf = (start: number, end: number) =>
    Array.from({ length: end - start }, (_, i) => {
      const t = catalogueTemplate(start + i, total);
      return [t.id, JSON.stringify(contentOf(t)), keyId, t.createdAt];
    });
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    const insert = db.prepare(
      `insert into template_revisions (template_id, revision, snapshot, diff, key_id, created_at) values (?, 1, ?, '[]', ?, ?)`,
    );
    const batch = db.transaction((rows: string[][]) => {
      for (const row of rows) insert.run(row);
    });
    for (let start = from; start < to; start += BATCH) batch(rowsOf(start, Math.min(to, start + BATCH)));
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let start = from; start < to; start += BATCH) {
      const rows = rowsOf(start, Math.min(to, start + BATCH));
      await client.query(
        `insert into template_revisions (template_id, revision, snapshot, diff, key_id, created_at)
         select t, 1, s, '[]', k, c from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[]) as r(t, s, k, c)`,
        [0, 1, 2, 3].map((c) => rows.map((row) => row[c])),
      );
    }
  } finally {
    await client.end();
  }
}

const visible = new Map<string, string[]>();

/**
 * Ids of up to `count` of the first `seeded` templates of the catalogue of `total`, that any key sees with
 * `includePublicTemplates=true`: public community templates, spread over the range (all of them when there are fewer).
 */
export function seededIds(count: number, seeded: number, total: number): string[] {
  let ids = visible.get(`${seeded}/${total}`);
  if (!ids) {
    ids = [];
    for (let n = 0; n < seeded; n++) {
      const t = catalogueTemplate(n, total);
      if (t.isPublic && !t.isPlatform) ids.push(t.id);
    }
    visible.set(`${seeded}/${total}`, ids);
  }
  const all = ids;
  const step = Math.max(1, all.length / count);
  return Array.from({ length: Math.min(count, all.length) }, (_, i) => all[Math.floor(i * step)] as string);
}
