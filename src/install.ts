import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Config, ConfigError } from './config.ts';
import { isKind } from './domain/errors.ts';
import { refuseOthers } from './private-files.ts';
import { Keyring, newKeyText, parseKey } from './sealing/keyring.ts';
import { dialectFor, sqliteFile } from './store/dialect.ts';
import { Store } from './store/store.ts';
import { Podplate } from './usecases/podplate.ts';

// Opening an install: its store over the database the config names, migrated; the keys that seal its secrets (the
// key file beside a SQLite database); the use cases over both. The server and the admin commands open it alike.

/** Migrates, waiting for a database that is not reachable yet (it may be starting too); other errors stop the start. */
export async function migrateWhenReachable(store: Store): Promise<void> {
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
  refuseOthers(path, 'the secrets key file');
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
  const file = sqliteFile(config.DATABASE_URL);
  if (file && file !== ':memory:') for (const part of ['', '-wal', '-shm']) refuseOthers(`${file}${part}`, 'the database file');
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

/** The use cases over `store` with the settings `config` gives: quotas, history bounds, sealing keys. */
export function podplateOf(store: Store, config: Config, keyring: Keyring | undefined): Podplate {
  return new Podplate(store, {
    authFailuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
    quotas: {
      templates: config.QUOTA_TEMPLATES_PER_ACCOUNT,
      bytes: config.QUOTA_BYTES_PER_ACCOUNT,
      endpoints: config.QUOTA_ENDPOINTS_PER_ACCOUNT,
      registryAuths: config.QUOTA_REGISTRY_AUTHS_PER_ACCOUNT,
      secrets: config.QUOTA_SECRETS_PER_ACCOUNT,
      historyBytes: config.QUOTA_HISTORY_BYTES_PER_ACCOUNT,
      storedResponses: config.QUOTA_IDEMPOTENCY_KEYS_PER_ACCOUNT,
    },
    history: { revisionsKept: config.REVISIONS_KEPT_PER_TEMPLATE, releasesKept: config.RELEASES_KEPT_PER_ENDPOINT },
    keyring,
    outboxRetentionDays: config.OUTBOX_RETENTION_DAYS,
    imageChecks: {
      enabled: config.IMAGE_CHECK === 'on',
      insecureRegistries: config.IMAGE_CHECK_INSECURE_REGISTRIES.split(',')
        .map((host) => host.trim())
        .filter((host) => host !== ''),
      requestTimeoutMs: config.IMAGE_CHECK_TIMEOUT_MS,
      retryBaseMs: config.IMAGE_CHECK_RETRY_BASE_MS,
      retryMaxMs: config.IMAGE_CHECK_RETRY_MAX_MS,
      perRegistry: config.IMAGE_CHECK_CONCURRENCY_PER_REGISTRY,
      perAccountPerMinute: config.IMAGE_CHECKS_PER_ACCOUNT_PER_MINUTE,
      pollMs: config.IMAGE_CHECK_POLL_MS,
    },
  });
}
