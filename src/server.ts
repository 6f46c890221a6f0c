import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { type Config, ConfigError, readConfig } from './config.ts';
import { isKind } from './domain/errors.ts';
import { Registry } from './registry/registry.ts';
import { Deliverer } from './releases/deliverer.ts';
import { Keyring, newKeyText, parseKey } from './secrets/keyring.ts';
import { dialectFor, sqliteFile, sqliteFilesOpenToOthers } from './store/dialect.ts';
import { Store } from './store/store.ts';

/** Migrates, waiting for a database that is not reachable yet (it may be starting too); other errors stop the start. */
async function migrateWhenReachable(store: Store): Promise<void> {
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await store.migrate();
    } catch (error) {
      if (!isKind(error, 'unavailable')) throw error;
      const cause = (error.cause as Error | undefined)?.message ?? error.message;
      process.stderr.write(`podplate: the database is not reachable (${cause}); retrying in ${delay} ms\n`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

const MAKE_A_KEY = 'Make one with `openssl rand -base64 32` (or `npx podplate secrets new-key`), and give every process the same.';

/** Where SQLite keeps its secrets key when SECRETS_KEY is unset: a file beside the database file. */
export const keyFileOf = (databaseFile: string): string => `${resolve(databaseFile)}.secrets-key`;

/** The key file the install `config` names keeps its secrets key in, when it keeps one (SQLite, no SECRETS_KEY). */
export function installKeyFile(config: Config): string | undefined {
  const file = sqliteFile(config.DATABASE_URL);
  return file && file !== ':memory:' && !config.SECRETS_KEY ? keyFileOf(file) : undefined;
}

/** The key in `path`, made there (mode 0600) if the file does not exist yet. */
function keyFromFile(path: string): string {
  try {
    const text = readFileSync(path, 'utf8');
    if ((statSync(path).mode & 0o077) !== 0) {
      process.stderr.write(`podplate: ${path} can be read by other users than its owner; chmod 600 it.\n`);
    }
    parseKey(text, path);
    return text.trim();
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') {
      throw new ConfigError(`cannot use the secrets key file ${path}: ${(error as Error).message}`);
    }
  }
  const key = newKeyText();
  // The key file is made before the database beside it: its folder is made private here, as the store would make it.
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as { code?: string }).code === 'EEXIST') return keyFromFile(path);
    throw new ConfigError(`cannot write the secrets key file ${path}: ${(error as Error).message}`);
  }
  process.stderr.write(
    `podplate: SECRETS_KEY is not set, so secrets are encrypted with a new key, kept in ${path} (mode 0600). ` +
      'Keep it with the database, and back it up with it: without it, stored registry passwords cannot be read.\n',
  );
  return key;
}

/**
 * The keys that seal secrets at rest: SECRETS_KEY, and SECRETS_KEY_PREVIOUS during a rotation. Without SECRETS_KEY,
 * PostgreSQL is refused (every process must share one key, so none may make its own), and SQLite uses the key file
 * beside its database, made on first start; an in-memory database gets a key that lives as long as it does.
 */
export function secretsKeyring(config: Config): Keyring {
  if (config.SECRETS_KEY) return Keyring.fromText(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS);
  const file = sqliteFile(config.DATABASE_URL);
  if (file === undefined) {
    throw new ConfigError(
      'SECRETS_KEY must be set on PostgreSQL: it encrypts registry passwords at rest, and every process must use the same one. ' +
        MAKE_A_KEY,
    );
  }
  return Keyring.fromText(file === ':memory:' ? newKeyText() : keyFromFile(keyFileOf(file)));
}

/** The store `config` names: its database, pool and time limits. */
export function openStore(config: Config, poolSize = config.DB_POOL_SIZE): Store {
  const dialect = dialectFor(config.DATABASE_URL, {
    poolSize,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectionTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
  });
  return Store.open(
    dialect,
    { transactionTimeoutMs: config.DB_TRANSACTION_TIMEOUT_MS },
    { maxBytes: config.CACHE_MAX_MB * 1024 * 1024, maxKeys: config.CACHE_MAX_KEYS },
  );
}

/**
 * V8 lets a heap grow to up to four times what its last full collection found alive before the next one; under a
 * load that makes much short-lived garbage (pages of large templates, many lists at once) that is where a server's
 * peak memory goes, not to what it keeps. A growth factor of its own bounds that (docs/performance.md: at
 * 1,000,000 templates the peak fell from 361 to 202 MB, at the same throughput). V8 reads the flag at each
 * collection, so setting it now, before the server allocates much, holds for the process's life.
 */
function boundHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/** The process: config, logger, database, listen, and a graceful shutdown on SIGTERM/SIGINT. */
export async function serve(config: Config = readConfig()): Promise<void> {
  boundHeapGrowth(config.HEAP_GROWTH_PERCENT);
  const keyring = secretsKeyring(config);
  const store = openStore(config);
  await migrateWhenReachable(store);
  // The read cache, invalidated by the database's own change signal (on PostgreSQL, a connection that LISTENs).
  await store.startCache();
  const registry = new Registry(store, {
    authFailuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
    quotas: {
      templates: config.QUOTA_TEMPLATES_PER_ACCOUNT,
      bytes: config.QUOTA_BYTES_PER_ACCOUNT,
      endpoints: config.QUOTA_ENDPOINTS_PER_ACCOUNT,
      registryAuths: config.QUOTA_REGISTRY_AUTHS_PER_ACCOUNT,
      secrets: config.QUOTA_SECRETS_PER_ACCOUNT,
    },
    history: { revisionsKept: config.REVISIONS_KEPT_PER_TEMPLATE, releasesKept: config.RELEASES_KEPT_PER_ENDPOINT },
    keyring,
    outboxRetentionDays: config.OUTBOX_RETENTION_DAYS,
  });
  try {
    await registry.secrets.checkKey();
  } catch (error) {
    await store.close();
    throw error;
  }
  const first = await registry.keys.bootstrap();
  if (first) {
    // The one time a key is shown by the server: on first start, so that somebody can sign in at all.
    process.stderr.write(
      `\nNo API key existed, so a platform key was created. It is shown this once; store it now:\n\n  ${first.secret}\n\n`,
    );
  }

  const app = await buildApp({ registry, config, logger: { level: config.LOG_LEVEL } });
  for (const { path, mode } of sqliteFilesOpenToOthers(config.DATABASE_URL)) {
    app.log.warn({ path, mode }, `other users may read or write the database file ${path} (mode ${mode}); chmod 600 it`);
  }
  const deliverer = config.RELEASE_WEBHOOK_URL
    ? new Deliverer(
        store,
        {
          url: config.RELEASE_WEBHOOK_URL,
          secret: config.RELEASE_WEBHOOK_SECRET as string,
          timeoutMs: config.RELEASE_WEBHOOK_TIMEOUT_MS,
          retryBaseMs: config.RELEASE_RETRY_BASE_MS,
          retryMaxMs: config.RELEASE_RETRY_MAX_MS,
          pollMs: config.OUTBOX_POLL_MS,
        },
        app.log,
      )
    : undefined;
  if (!deliverer) app.log.warn('RELEASE_WEBHOOK_URL is not set: rolling releases are recorded, and wait in the outbox');
  // Every minute: delivered outbox events past OUTBOX_RETENTION_DAYS, responses to Idempotency-Keys past their 24
  // hours, rate-limit buckets idle for a minute (full again, so failed addresses leave no rows), old change rows.
  registry.housekeeping.start();
  // SIGTERM or SIGINT: stop accepting connections, let the requests in flight finish (those arriving on open
  // connections are served, with `Connection: close`), stop the deliverer between attempts, close the database.
  // Past the grace period the process exits anyway (1); a second signal ends it at once.
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_SECONDS * 1000, logger: app.log }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down: draining in-flight requests');
    await Promise.all([app.close(), deliverer?.stop(), registry.housekeeping.stop()]);
    await store.close();
  });

  await app.listen({ host: config.HOST, port: config.PORT });
  deliverer?.start();
}
