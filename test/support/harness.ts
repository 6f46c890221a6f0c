import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { type AppOptions, buildApp } from '../../src/app.ts';
import type { Role } from '../../src/domain/account.ts';
import type { Quotas } from '../../src/domain/quota.ts';
import type { HistoryBounds } from '../../src/domain/revision.ts';
import { Keyring, newKeyText } from '../../src/sealing/keyring.ts';
import { type CacheOptions, DEFAULT_CACHE } from '../../src/store/cache/read-cache.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { DEFAULT_STORE_OPTIONS, Store } from '../../src/store/store.ts';
import { IMAGE_CHECKS_OFF, type ImageCheckOptions } from '../../src/usecases/image-checks.ts';
import { Podplate } from '../../src/usecases/podplate.ts';

// Tests run against real databases: a SQLite file in a temporary folder, and PostgreSQL when
// TEST_DATABASE_URL names one (each harness in a schema of its own, dropped afterwards).

export type DialectName = 'sqlite' | 'postgres';

const postgresUrl = process.env.TEST_DATABASE_URL;
const requirePostgres = process.env.REQUIRE_POSTGRES === '1';
if (!postgresUrl) {
  if (requirePostgres) throw new Error('REQUIRE_POSTGRES=1 but TEST_DATABASE_URL is not set: the PostgreSQL half cannot be skipped here.');
  process.stderr.write('\n*** TEST_DATABASE_URL is not set: the PostgreSQL half of this suite is SKIPPED. ***\n\n');
  // Also in the runner's summary ("skipped N"), where it can't be missed.
  test('the PostgreSQL half of this file', { skip: 'TEST_DATABASE_URL is not set' });
}

export const DIALECTS: DialectName[] = postgresUrl ? ['sqlite', 'postgres'] : ['sqlite'];

/** Registers the suite once per database. */
export function forEachDialect(title: string, suite: (dialect: DialectName) => void): void {
  for (const dialect of DIALECTS) describe(`${title} [${dialect}]`, () => suite(dialect));
}

export interface Database {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database of the given kind. */
/**
 * Runs a Kysely migration of a test's own database; its error, or undefined. Kysely's introspector reads every
 * schema of the database, and on PostgreSQL a test running beside may drop its schema meanwhile ("schema … does not
 * exist", code 3F000, or one of its tables, 42P01; never this test's own): such a run is tried again, as Store.migrate does.
 */
export async function migrateQuietly(run: () => Promise<{ error?: unknown }>): Promise<unknown> {
  for (let attempt = 1; ; attempt++) {
    const { error } = await run();
    const code = (error as { code?: string } | undefined)?.code;
    if (!error || (code !== '3F000' && code !== '42P01') || attempt === 5) return error;
  }
}

export async function freshDatabase(dialect: DialectName): Promise<Database> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'podplate-test-'));
    return { url: `sqlite:${join(dir, 'podplate.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(postgresUrl as string);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: any;
  text: string;
}

export interface Harness {
  app: FastifyInstance;
  /** The store under the app, for tests that look at what was stored. */
  store: Store;
  podplate: Podplate;
  database: Database;
  /** A new API key for `account` (created on first use). */
  key(account: string, role?: Role): Promise<string>;
  /** A request through the real HTTP layer; `body` objects are sent as JSON. */
  call(
    method: InjectOptions['method'],
    url: string,
    options?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  close(): Promise<void>;
}

export type HarnessConfig = Partial<
  AppOptions['config'] & {
    cache: CacheOptions;
    AUTH_FAILURES_PER_MINUTE: number;
    quotas: Quotas;
    history: HistoryBounds;
    keyring: Keyring;
    /** Image checks: off unless a test turns them on (no test reaches a registry it did not start). */
    imageChecks: Partial<ImageCheckOptions>;
  }
>;

export async function startHarness(dialect: DialectName, config: HarnessConfig = {}): Promise<Harness> {
  return openHarness(await freshDatabase(dialect), config);
}

/** A harness over `database` as it is (migrated if it needs to be); closing it drops the database. */
export async function openHarness(database: Database, config: HarnessConfig = {}): Promise<Harness> {
  // Tests assert no speed, and on these shared machines a catalog query has taken over 5 s right after the outage
  // tests restart PostgreSQL: a statement may take up to 30 s here before it is cancelled.
  const {
    cache = DEFAULT_CACHE,
    AUTH_FAILURES_PER_MINUTE = 0,
    quotas,
    history,
    keyring = Keyring.fromText(newKeyText()),
    imageChecks,
    ...appConfig
  } = config;
  const store = Store.open(
    dialectFor(database.url, { poolSize: 5, statementTimeoutMs: 30_000, connectionTimeoutMs: 5000 }),
    DEFAULT_STORE_OPTIONS,
    cache,
  );
  await store.migrate();
  // As the server does: reads go through the cache the database's changes invalidate.
  await store.startCache(`podplate-test-${process.pid}`);
  const podplate = new Podplate(store, {
    quotas,
    history,
    authFailuresPerMinute: AUTH_FAILURES_PER_MINUTE,
    keyring,
    imageChecks: { ...IMAGE_CHECKS_OFF, ...imageChecks },
  });
  const app = await buildApp({
    podplate,
    config: { REQUEST_TIMEOUT_MS: 30_000, HEADERS_TIMEOUT_MS: 10_000, RATE_LIMIT_PER_MINUTE: 0, ...appConfig },
    logger: process.env.TEST_LOG ? { level: process.env.TEST_LOG } : false,
  });
  return {
    app,
    store,
    podplate,
    database,
    key: async (account, role = 'user') => (await podplate.keys.create(account, role)).secret,
    call: async (method, url, options = {}) => {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      let payload: string | undefined;
      if (options.body !== undefined) {
        payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await app.inject({ method, url, headers, payload });
      let body: unknown;
      try {
        body = response.body ? JSON.parse(response.body) : undefined;
      } catch {
        body = undefined;
      }
      return { status: response.statusCode, headers: response.headers, body, text: response.body };
    },
    close: async () => {
      await podplate.imageChecks.stop();
      await app.close();
      await store.close();
      await database.drop();
    },
  };
}

/** A new registry auth of the key's account; its id. */
export async function registryAuth(h: Harness, key: string, name = `auth ${randomBytes(4).toString('hex')}`): Promise<string> {
  const r = await h.call('POST', '/v1/containerregistryauth', { key, body: { name, username: 'user', password: 'password' } });
  if (r.status !== 200) throw new Error(`creating a registry auth: ${r.text}`);
  return r.body.id;
}

/** A valid create body, with `overrides`. */
export const templateBody = (overrides: Record<string, unknown> = {}) => ({
  name: `template ${randomBytes(4).toString('hex')}`,
  imageName: 'runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04',
  ...overrides,
});
