import SQLite from 'better-sqlite3';
import pg from 'pg';
import { contentOf } from '../src/domain/revision.ts';
import { templateJson } from '../src/domain/template.ts';
import { sampleTemplate } from './sample.ts';

// Seeds templates in bulk, straight into the database: a million rows in seconds, not through the API.
// Every row is a public template of `ownerId`, with the same content but its own id and name.

const COLUMNS = `(id, owner_id, endpoint_id, name, image_name, category, container_disk_in_gb, volume_in_gb, volume_mount_path,
  container_registry_auth_id, docker_entrypoint, docker_start_cmd, env, ports, readme, is_public, is_platform, is_serverless,
  earned, runtime_in_min, revision, created_at, updated_at, search, body)`;

const idOf = (n: number) => `seed${String(n).padStart(12, '0')}`;

/** The stored representation of every seeded row, with its id and name to fill in. */
const bodyOf = (at: string) => templateJson(sampleTemplate('\u0000ID\u0000', '\u0000NAME\u0000', at));
const ID = JSON.stringify('\u0000ID\u0000');
const NAME = JSON.stringify('\u0000NAME\u0000');

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

/** The first revision of each seeded template, as the API writes it: its content, no diff, the key that made it. */
export async function seedRevisions(databaseUrl: string, keyId: string, from: number, to: number): Promise<void> {
  const at = new Date().toISOString();
  const snapshot = JSON.stringify(contentOf(sampleTemplate('\u0000ID\u0000', '\u0000NAME\u0000', at)));
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    const insert = db.prepare(
      `insert into template_revisions (template_id, revision, snapshot, diff, key_id, created_at) values (?, 1, ?, '[]', ?, ?)`,
    );
    const batch = db.transaction((start: number, end: number) => {
      for (let n = start; n < end; n++) insert.run(idOf(n), snapshot.replace(NAME, `"seeded ${n}"`), keyId, at);
    });
    for (let start = from; start < to; start += 50_000) batch(start, Math.min(to, start + 50_000));
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into template_revisions (template_id, revision, snapshot, diff, key_id, created_at)
       select 'seed' || lpad(g::text, 12, '0'), 1, replace($1, $2, '"seeded ' || g || '"'), '[]', $3, $4
       from generate_series($5::bigint, $6::bigint - 1) g`,
      [snapshot, NAME, keyId, at, from, to],
    );
  } finally {
    await client.end();
  }
}

/** Ids of seeded templates, spread over the whole range. */
export function seededIds(count: number, total: number): string[] {
  const step = Math.max(1, Math.floor(total / count));
  return Array.from({ length: Math.min(count, total) }, (_, i) => idOf(i * step));
}
