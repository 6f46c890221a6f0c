import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { dialectFor } from '../src/store/dialect.ts';
import { migrations } from '../src/store/migrations/index.ts';
import { type Database, forEachDialect, freshDatabase, migrateQuietly } from './support/harness.ts';
import { call, freePort, podplate, startServer } from './support/process.ts';

// Upgrades as an operator runs them: `podplate migrate --status` and `--dry-run` say what is there and what would run,
// changing nothing; `migrate` on SQLite takes a backup first, and says where, and that copy is the way back; a process
// of an older version on a database a newer one migrated serves beside it when every newer migration is recorded as
// compatible, and otherwise stops with one line saying what to do.

const BEFORE = '0018-changes-told-to-the-writer';
/** The first migration after BEFORE: the backup is named for it. */
const FIRST_PENDING = '0019-storage-per-account';
const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The database as a release that knew migrations up to `to` left it, with an account's key in it. */
async function migratedTo(db: Database, to: string): Promise<void> {
  const dialect = dialectFor(db.url);
  const kysely = new Kysely<any>({ dialect: dialect.kysely });
  try {
    const schema =
      dialect.name === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(kysely)).rows[0]?.s : undefined;
    const migrator = new Migrator({
      db: kysely,
      provider: { getMigrations: async () => migrations(dialect) },
      migrationTableSchema: schema,
    });
    assert.equal(await migrateQuietly(() => migrator.migrateTo(to)), undefined);
    await sql`insert into accounts (id, name, role, created_at) values ('acc_old', 'old', 'user', '2026-01-01T00:00:00.000Z')`.execute(
      kysely,
    );
  } finally {
    await kysely.destroy();
  }
}

/** What a newer version leaves when it runs a migration this one does not know. */
async function futureMigration(db: Database, name: string, compatible: boolean): Promise<void> {
  const kysely = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
  try {
    const at = new Date().toISOString();
    await sql`insert into kysely_migration (name, timestamp) values (${name}, ${at})`.execute(kysely);
    await sql`insert into podplate_migrations (name, compatible, applied_at) values (${name}, ${compatible ? 1 : 0}, ${at})`.execute(
      kysely,
    );
  } finally {
    await kysely.destroy();
  }
}

forEachDialect('upgrades', (dialect) => {
  let db: Database;
  let env: Record<string, string>;
  before(async () => {
    db = await freshDatabase(dialect);
    env = { DATABASE_URL: db.url };
    await migratedTo(db, BEFORE);
  });
  after(() => db.drop());

  test('migrate --status lists applied and pending migrations, --dry-run says what would run; neither changes anything', () => {
    const status = podplate(['migrate', '--status'], env);
    assert.equal(status.code, 0, status.stderr);
    const rows = status.stdout.trim().split('\n');
    assert.match(rows[0] as string, /^MIGRATION\s+STATE\s+APPLIED\s+COMPATIBLE$/);
    assert.match(rows[1] as string, /^0001-initial\s+applied\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+-$/);
    assert.match(status.stdout, new RegExp(`\\n${BEFORE}\\s+applied\\s+\\S+\\s+-\\n`));
    assert.match(status.stdout, /\n0023-key-access-expiry\s+pending\s+-\s+no\n/);
    assert.match(status.stderr, /^18 applied, \d+ pending \(this version knows up to \S+\)/);

    const dry = podplate(['migrate', '--dry-run'], env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stderr, new RegExp(`^Would apply 5 migrations: ${FIRST_PENDING}, .*, 0023-key-access-expiry\\.`));
    assert.match(dry.stderr, /0023-key-access-expiry: processes of the version before may not serve beside it: stop them first/);
    if (dialect === 'sqlite')
      assert.match(dry.stderr, new RegExp(`It would back up the database to .*podplate\\.db\\.before-${FIRST_PENDING} first`));
    assert.equal(podplate(['migrate', '--status'], env).stdout, status.stdout, 'nothing changed');
    if (dialect === 'sqlite') {
      const folder = dirname(db.url.slice('sqlite:'.length));
      assert.deepEqual(
        readdirSync(folder).filter((f) => f.includes('before-')),
        [],
        'no backup made',
      );
    }
    assert.equal(podplate(['migrate', '--status', '--dry-run'], env).code, 2);
  });

  test('migrate brings it up to date (on SQLite after a backup beside it, which is the way back)', async () => {
    const r = podplate(['migrate'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /The database schema is up to date\./);
    if (dialect === 'sqlite') {
      const file = db.url.slice('sqlite:'.length);
      const backup = `${file}.before-${FIRST_PENDING}`;
      assert.match(r.stderr, new RegExp(`backed up the database to ${backup.replace(/[.]/g, '\\.')} before migrating it`));
      assert.ok(existsSync(backup));
      // The way back, as docs/operations.md gives it: the copy, served by the old release, holds what was there.
      const back = await freshDatabase('sqlite');
      try {
        copyFileSync(backup, back.url.slice('sqlite:'.length));
        const status = podplate(['migrate', '--status'], { DATABASE_URL: back.url });
        assert.match(status.stdout, /\n0023-key-access-expiry\s+pending/);
        const kysely = new Kysely<any>({ dialect: dialectFor(back.url).kysely });
        assert.deepEqual((await sql`select name from accounts`.execute(kysely)).rows, [{ name: 'old' }]);
        await kysely.destroy();
      } finally {
        await back.drop();
      }
    } else assert.equal(/backed up/.test(r.stderr), false);
    const status = podplate(['migrate', '--status'], env);
    assert.equal(/pending/.test(status.stdout), false);
    assert.match(podplate(['migrate', '--dry-run'], env).stderr, /up to date: nothing would run/);
  });

  test('an older process on a database a newer version migrated: it serves beside a compatible migration', async () => {
    await futureMigration(db, '0098-future-compatible', true);
    const key = podplate(['keys', 'create', '--user', 'alice'], env).stdout.trim();
    const server = await startServer(env);
    try {
      assert.equal((await call(server, key, 'POST', '/v1/templates', { name: 'still served', imageName: 'ubuntu' })).status, 200);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const told = jsonLines(server.stdout()).find((l) => Array.isArray(l.newer));
    assert.deepEqual(told?.newer, ['0098-future-compatible']);
    assert.match(podplate(['migrate', '--status'], env).stdout, /\n0098-future-compatible\s+newer\s+\S+\s+yes\n/);
  });

  test('… and stops, in one line saying what to do, beside one that is not', async () => {
    await futureMigration(db, '0099-future-breaking', false);
    const served = podplate(['serve'], {
      ...env,
      PORT: String(await freePort()),
      ...(dialect === 'postgres' ? { SECRETS_KEY: 'dGVzdC1vbmx5IHNlY3JldHMga2V5LCAzMiBieXRlcyE=' } : {}),
    });
    assert.equal(served.code, 1, served.stdout + served.stderr);
    const fatal = jsonLines(served.stdout).filter((l) => l.level === 60);
    assert.equal(fatal.length, 1);
    assert.deepEqual(fatal[0]?.refused, ['0099-future-breaking']);
    assert.match(
      String(fatal[0]?.msg),
      /0099-future-breaking is not recorded as safe for older processes to serve beside: run the newer version, or restore the backup/,
    );
    assert.equal(/\n\s+at /.test(served.stdout + served.stderr), false, 'no stack trace');
    for (const args of [['migrate'], ['keys', 'list'], ['export']]) {
      const r = podplate(args, env);
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^podplate: .*newer version/);
    }
    assert.match(podplate(['migrate', '--status'], env).stdout, /\n0099-future-breaking\s+newer\s+\S+\s+no\n/);
  });
});
