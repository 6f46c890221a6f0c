import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { dialectFor } from '../../src/store/dialect.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { NewerSchema, Store } from '../../src/store/store.ts';
import { toRow } from '../../src/store/templates/columns.ts';
import { type Database, forEachDialect, freshDatabase, migrateQuietly } from '../support/harness.ts';
import { at, templateRecord } from '../support/records.ts';

// Migrations on an install that already holds data: what a new migration computes from the rows already there.

forEachDialect('migrations over existing data', (dialect) => {
  let db: Database;
  before(async () => {
    db = await freshDatabase(dialect);
  });
  after(() => db.drop());

  test('0005 counts what each account held before it: templates, their bytes, endpoints', async () => {
    const sqlDialect = dialectFor(db.url);
    const kysely = new Kysely<any>({ dialect: sqlDialect.kysely });
    const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(kysely)).rows[0]?.s : undefined;
    const migrator = new Migrator({
      db: kysely,
      provider: { getMigrations: async () => migrations(sqlDialect) },
      migrationTableSchema: schema,
    });
    try {
      assert.equal(await migrateQuietly(() => migrator.migrateTo('0004-body-follows-columns')), undefined);
      await sql`insert into accounts (id, name, role, created_at) values ('acc_a', 'a', 'user', ${at}), ('acc_b', 'b', 'user', ${at})`.execute(
        kysely,
      );
      const templates = [
        templateRecord({ ownerId: 'acc_a', readme: 'é'.repeat(100), isServerless: true }),
        templateRecord({ ownerId: 'acc_a', env: { A: 'b' } }),
        templateRecord({ ownerId: 'acc_b' }),
      ];
      const raw = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
      // The rows as the store wrote them then: without the columns later migrations added (0021's key, 0022's image check).
      for (const t of templates) {
        const row = Object.fromEntries(
          Object.entries(toRow(t)).filter(([column]) => column !== 'name_key' && (column === 'image_name' || !column.startsWith('image_'))),
        );
        await raw.insertInto('templates').values(row).execute();
      }
      await sql`insert into endpoints (id, owner_id, name, template_id, workers_min, workers_max, version, created_at, updated_at)
        values ('ep1', 'acc_a', 'ep', ${templates[0]?.id}, 0, 1, 1, ${at}, ${at})`.execute(raw);
      await raw.destroy();

      const latest = Store.open(dialectFor(db.url));
      try {
        await latest.migrate();
        const { templateBytes } = await import('../../src/domain/quota.ts');
        const bytes = (ts: typeof templates) => ts.reduce((sum, t) => sum + templateBytes(t), 0);
        assert.deepEqual(await latest.accounts.usage('acc_a'), {
          templates: 2,
          templateBytes: bytes(templates.slice(0, 2)),
          endpoints: 1,
          registryAuths: 0,
          historyBytes: 0,
          storedResponses: 0,
        });
        assert.deepEqual(await latest.accounts.usage('acc_b'), {
          templates: 1,
          templateBytes: bytes(templates.slice(2)),
          endpoints: 0,
          registryAuths: 0,
          historyBytes: 0,
          storedResponses: 0,
        });
        assert.deepEqual(await latest.accounts.usage('acc_none'), {
          templates: 0,
          templateBytes: 0,
          endpoints: 0,
          registryAuths: 0,
          historyBytes: 0,
          storedResponses: 0,
        });
        // 0022: every template written before is due for an image check, and its representation shows it pending.
        for (const t of templates) {
          const shown = JSON.parse((await latest.templates.findView(t.id))?.json ?? '{}');
          assert.equal(shown.imageCheck.status, 'pending');
          assert.notEqual((await latest.imageChecks.queued(t.id))?.dueAt, null);
        }
      } finally {
        await latest.close();
      }
    } finally {
      await kysely.destroy();
    }
  });
});

forEachDialect('migration 0012 over existing data', (dialect) => {
  test('counts the registry auths each account held before it, and follows them from then on', async () => {
    const db = await freshDatabase(dialect);
    const sqlDialect = dialectFor(db.url);
    const kysely = new Kysely<any>({ dialect: sqlDialect.kysely });
    try {
      const schema =
        dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(kysely)).rows[0]?.s : undefined;
      const migrator = new Migrator({
        db: kysely,
        provider: { getMigrations: async () => migrations(sqlDialect) },
        migrationTableSchema: schema,
      });
      assert.equal(await migrateQuietly(() => migrator.migrateTo('0007-registry-auths')), undefined);
      await sql`insert into accounts (id, name, role, created_at) values ('acc_a', 'a', 'user', ${at})`.execute(kysely);
      const auth = (id: string) =>
        sql`insert into registry_auths (id, owner_id, name, username, password, created_at) values (${id}, 'acc_a', ${id}, 'u', 'sealed', ${at})`;
      await auth('ra1').execute(kysely);
      await auth('ra2').execute(kysely);
      assert.equal(await migrateQuietly(() => migrator.migrateToLatest()), undefined);
      const count = async () =>
        Number(
          (await sql<{ n: number }>`select registry_auths as n from account_usage where account_id = 'acc_a'`.execute(kysely)).rows[0]?.n,
        );
      assert.equal(await count(), 2);
      await auth('ra3').execute(kysely);
      await sql`delete from registry_auths where id = 'ra1'`.execute(kysely);
      assert.equal(await count(), 2, 'an insert and a delete by plain SQL count too');
    } finally {
      await kysely.destroy();
      await db.drop();
    }
  });
});

forEachDialect('migrations 0019 to 0021 over existing data', (dialect) => {
  test('history is counted, foreign auths cleared, names keyed (twins keep keys of their own) and search folded again', async () => {
    const db = await freshDatabase(dialect);
    const sqlDialect = dialectFor(db.url);
    const kysely = new Kysely<any>({ dialect: sqlDialect.kysely });
    try {
      const schema =
        dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(kysely)).rows[0]?.s : undefined;
      const migrator = new Migrator({
        db: kysely,
        provider: { getMigrations: async () => migrations(sqlDialect) },
        migrationTableSchema: schema,
      });
      assert.equal(await migrateQuietly(() => migrator.migrateTo('0018-changes-told-to-the-writer')), undefined);
      await sql`insert into accounts (id, name, role, created_at) values ('acc_a', 'a', 'user', ${at}), ('acc_b', 'b', 'user', ${at})`.execute(
        kysely,
      );
      await sql`insert into registry_auths (id, owner_id, name, username, password, created_at) values ('ra_b', 'acc_b', 'b auth', 'u', 'sealed', ${at})`.execute(
        kysely,
      );
      const templates = [
        templateRecord({ ownerId: 'acc_a', name: 'Café', createdAt: '2026-01-01T00:00:00.000Z' }),
        templateRecord({ ownerId: 'acc_a', name: 'cafe\u0301', createdAt: '2026-01-02T00:00:00.000Z' }),
        templateRecord({ ownerId: 'acc_a', name: 'İstanbul', containerRegistryAuthId: 'ra_b' }),
      ];
      for (const t of templates) {
        const row = Object.fromEntries(
          Object.entries(toRow(t)).filter(([column]) => column !== 'name_key' && (column === 'image_name' || !column.startsWith('image_'))),
        );
        await kysely
          .insertInto('templates')
          .values({ ...row, search: t.name.toLowerCase() })
          .execute();
      }
      await sql`insert into template_revisions (template_id, revision, snapshot, diff, key_id, created_at)
        values (${templates[0]?.id}, 1, '{"x":1}', '[]', 'key', ${at})`.execute(kysely);
      assert.equal(await migrateQuietly(() => migrator.migrateToLatest()), undefined);

      const usage = (await sql<{ h: number }>`select history_bytes as h from account_usage where account_id = 'acc_a'`.execute(kysely))
        .rows[0];
      assert.equal(Number(usage?.h), '{"x":1}'.length + '[]'.length);
      const rows = (
        await sql<{
          id: string;
          name_key: string;
          search: string;
          container_registry_auth_id: string;
        }>`select id, name_key, search, container_registry_auth_id
          from templates order by created_at`.execute(kysely)
      ).rows;
      assert.deepEqual(
        rows.map((r) => r.name_key),
        ['café', `café (${templates[1]?.id})`, 'istanbul'],
      );
      assert.equal(rows[2]?.container_registry_auth_id, '', "another account's auth is cleared");
      assert.match(rows[2]?.search ?? '', /^istanbul\n/);
      await assert.rejects(
        () =>
          kysely
            .insertInto('templates')
            .values({ ...toRow(templateRecord({ ownerId: 'acc_a', name: 'CAFÉ' })) })
            .execute(),
        'a third Café is one name too many',
      );
    } finally {
      await kysely.destroy();
      await db.drop();
    }
  });
});

forEachDialect('the compatibility record: an older version on a newer database', (dialect) => {
  let db: Database;
  before(async () => {
    db = await freshDatabase(dialect);
  });
  after(() => db.drop());

  /** What a newer version leaves when it runs a migration this one does not know. */
  const future = async (name: string, compatible: boolean | undefined) => {
    const raw = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
    try {
      await sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(raw);
      if (compatible !== undefined) {
        await sql`insert into podplate_migrations (name, compatible, applied_at) values (${name}, ${compatible ? 1 : 0}, ${new Date().toISOString()})`.execute(
          raw,
        );
      }
    } finally {
      await raw.destroy();
    }
  };
  const forget = async (name: string) => {
    const raw = new Kysely<any>({ dialect: dialectFor(db.url).kysely });
    await sql`delete from kysely_migration where name = ${name}`.execute(raw);
    await sql`delete from podplate_migrations where name = ${name}`.execute(raw);
    await raw.destroy();
  };

  test('each migration run is recorded, in its own transaction, with what it declares', async () => {
    const store = Store.open(dialectFor(db.url));
    try {
      await store.migrate();
      const state = await store.migrationState();
      assert.deepEqual(state.pending, []);
      assert.equal(state.applied.length, Object.keys(migrations(dialectFor(db.url))).length);
      assert.ok(state.applied.every((m) => m.known));
      assert.equal(state.applied.find((m) => m.name === '0023-key-access-expiry')?.compatible, false);
    } finally {
      await store.close();
    }
  });

  test('migrations of a newer version, all recorded as compatible: served as it is, nothing migrated', async () => {
    await future('0099-future-compatible', true);
    const store = Store.open(dialectFor(db.url));
    try {
      const state = await store.migrate();
      assert.deepEqual(
        state.applied.filter((m) => !m.known).map((m) => [m.name, m.compatible]),
        [['0099-future-compatible', true]],
      );
      // It still serves: a key and a template.
      await store.transaction(async (tx) => {
        const owner = await tx.accounts.ensure({ id: 'acc_f', name: 'f', role: 'user', createdAt: at });
        assert.equal(owner.id, 'acc_f');
      });
    } finally {
      await store.close();
      await forget('0099-future-compatible');
    }
  });

  for (const [what, compatible] of [
    ['recorded as not compatible', false],
    ['without a record', undefined],
  ] as const) {
    test(`a migration of a newer version ${what}: refused, naming it and what to do`, async () => {
      await future('0098-future-compatible', true);
      await future('0099-future-breaking', compatible);
      const store = Store.open(dialectFor(db.url));
      try {
        await assert.rejects(store.migrate(), (error: Error) => {
          assert.ok(error instanceof NewerSchema);
          assert.deepEqual(
            error.refused.map((m) => m.name),
            ['0099-future-breaking'],
          );
          assert.match(
            error.message,
            /migrated by a newer version of Podplate \(0098-future-compatible, 0099-future-breaking; this version knows up to \d{4}-[a-z0-9-]+\)/,
          );
          assert.match(
            error.message,
            /0099-future-breaking is not recorded as safe for older processes to serve beside: run the newer version, or restore the backup/,
          );
          assert.equal(error.message.includes('\n'), false, 'one line');
          return true;
        });
      } finally {
        await store.close();
        await forget('0098-future-compatible');
        await forget('0099-future-breaking');
      }
    });
  }
});
