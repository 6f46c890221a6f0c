import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Config, ConfigError } from './config.ts';
import { isKind } from './domain/errors.ts';
import { refuseOthers } from './private-files.ts';
import { Keyring, newKeyText, parseKey } from './sealing/keyring.ts';
import { dialectFor, sqliteFile } from './store/dialect.ts';
import { declared } from './store/migrations/index.ts';
import { type AppliedMigration, type MigrationState, NewerSchema, Store } from './store/store.ts';

export { NewerSchema };

import { backupInstall } from './transfer/backup.ts';
import type { CreatedKey } from './usecases/keys.ts';
import { Podplate } from './usecases/podplate.ts';

// Opening an install: its store over the database the config names, migrated (a SQLite file backed up first); the keys
// that seal its secrets (the key file beside a SQLite database); the use cases over both; the first platform key. The
// server and the admin commands open it alike, each saying what happens its own way (InstallLog).

/** Where opening an install says what it does: the server's JSON log, or the admin commands' lines on stderr. */
export interface InstallLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** The admin commands' way: a line on stderr each. */
export const stderrLog: InstallLog = {
  info: (_fields, message) => process.stderr.write(`podplate: ${message}\n`),
  warn: (_fields, message) => process.stderr.write(`podplate: ${message}\n`),
};

/** DATABASE_URL as it may be shown: without its password. */
export function shownDatabase(url: string): string {
  if (sqliteFile(url) !== undefined) return url;
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'postgres://…';
  }
}

/**
 * What the database's refusal means for the operator, when it is one that retrying can't mend: no such database, a
 * user refused, a file that can't be made. A ConfigError naming DATABASE_URL, or undefined for any other error.
 */
export function databaseRefusal(error: unknown, config: Pick<Config, 'DATABASE_URL'>): ConfigError | undefined {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  const shown = shownDatabase(config.DATABASE_URL);
  const because = (what: string) => new ConfigError(`DATABASE_URL=${shown}: ${what}`, ['DATABASE_URL']);
  if (code === '3D000') return because('that database does not exist: create it (createdb), or name an existing one');
  if (code === '28P01' || code === '28000') return because('PostgreSQL refused the user: check the user, its password and pg_hba.conf');
  if (code === '3F000') return because('the schema in its search_path does not exist: create it, or correct the URL');
  if (['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EISDIR'].includes(code) || code.startsWith('SQLITE_CANTOPEN')) {
    return because(`the SQLite file can't be opened or made there (${code}): check the path and its folder's permissions`);
  }
  return undefined;
}

/** Where a SQLite database is copied before a migration changes it: beside it, named for the first migration to run. */
export function backupFileOf(databaseFile: string, firstPending: string): string {
  const base = `${resolve(databaseFile)}.before-${firstPending}`;
  if (!existsSync(base)) return base;
  return `${base}.${new Date().toISOString().replace(/[:.]/g, '-')}`;
}

/**
 * Brings the install's schema up to date. A SQLite database that holds any migration is first copied, through the
 * online backup API, beside itself (the way back: docs/operations.md#upgrading), and the copy's path said. A database
 * that can't be reached yet (it may be starting too) is waited for, retrying, up to `waitSeconds`; a refusal that
 * retrying can't mend (no such database, a user refused) stops at once, naming DATABASE_URL.
 */
export async function migrateInstall(
  store: Store,
  config: Config,
  log: InstallLog,
  waitSeconds = config.DB_WAIT_SECONDS,
): Promise<MigrationState> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      const file = sqliteFile(config.DATABASE_URL);
      if (file !== undefined && file !== ':memory:') {
        const { applied, pending } = await store.migrationState();
        if (applied.length > 0 && pending.length > 0 && applied.every((m) => m.known)) {
          const backup = backupFileOf(file, pending[0] as string);
          await backupInstall(store, backup);
          log.info({ backup, pending }, `backed up the database to ${backup} before migrating it (${pending.join(', ')})`);
        }
      }
      const state = await store.migrate();
      const newer = state.applied.filter((m) => !m.known).map((m) => m.name);
      if (newer.length > 0) {
        log.warn(
          { newer },
          `the database has migrations of a newer version, recorded as safe for this one to serve beside: ${newer.join(', ')}`,
        );
      }
      return state;
    } catch (error) {
      const refusal = databaseRefusal(error, config);
      if (refusal) throw refusal;
      if (!isKind(error, 'unavailable')) throw error;
      const cause = (error.cause as Error | undefined)?.message ?? error.message;
      if (Date.now() + delay > deadline) {
        throw new ConfigError(
          `DATABASE_URL=${shownDatabase(config.DATABASE_URL)}: the database is not reachable (${cause})` +
            (waitSeconds > 0 ? ` after ${waitSeconds} s (DB_WAIT_SECONDS)` : ''),
          ['DATABASE_URL'],
        );
      }
      log.warn({ cause, retryInMs: delay }, `the database is not reachable (${cause}); retrying in ${delay} ms`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** What `podplate migrate --status` and `--dry-run` show: the migrations, each one's declaration, the backup's path. */
export interface MigrationReport {
  applied: AppliedMigration[];
  pending: string[];
  latest: string;
  /** Whether processes of the release before may serve beside each of this version's migrations (null: not declared). */
  declared: Map<string, boolean | null>;
  /** SQLite: where `migrate` would back the database up first. */
  backup?: string;
}

/** The install's migrations as they are, changing nothing. */
export async function migrationReport(store: Store, config: Config): Promise<MigrationReport> {
  const { applied, pending } = await store.migrationState();
  const file = sqliteFile(config.DATABASE_URL);
  const backs = file !== undefined && file !== ':memory:' && applied.length > 0 && pending.length > 0;
  return {
    applied,
    pending,
    latest: store.latestMigration(),
    declared: declared(),
    backup: backs ? backupFileOf(file, pending[0] as string) : undefined,
  };
}

/** Where the first start writes the first platform key when no terminal shows it (BOOTSTRAP_KEY_FILE). */
export function bootstrapKeyFile(config: Config): string {
  if (config.BOOTSTRAP_KEY_FILE) return resolve(config.BOOTSTRAP_KEY_FILE);
  const file = sqliteFile(config.DATABASE_URL);
  return file && file !== ':memory:' ? `${resolve(file)}.first-platform-key` : resolve('data/first-platform-key');
}

/**
 * The first platform key, made when the database holds no key at all, written where no log stream goes: `show`n on a
 * terminal, or into `file` (made with O_EXCL and mode 0600 before the key exists, so an existing file is never
 * overwritten and a key is never made that nobody can read). Resolves with where it went, or undefined when keys exist.
 */
export async function bootstrapKey(
  podplate: Podplate,
  where: { show: (key: CreatedKey) => void } | { file: string },
): Promise<CreatedKey | undefined> {
  if (!(await podplate.keys.needsBootstrap())) return undefined;
  if ('show' in where) {
    const key = await podplate.keys.bootstrap();
    if (key) where.show(key);
    return key;
  }
  mkdirSync(dirname(where.file), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = openSync(where.file, 'wx', 0o600);
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') {
      throw new ConfigError(
        `BOOTSTRAP_KEY_FILE ${where.file} exists, and the database holds no key: a first platform key is never written over a file. ` +
          'Move it away (it may hold the key of an earlier install), or make the first key with `podplate keys create --user <name> --role platform`.',
        ['BOOTSTRAP_KEY_FILE'],
      );
    }
    throw new ConfigError(`BOOTSTRAP_KEY_FILE ${where.file} can't be written: ${(error as Error).message}`, ['BOOTSTRAP_KEY_FILE']);
  }
  try {
    const key = await podplate.keys.bootstrap();
    if (key) writeSync(fd, `${key.secret}\n`);
    closeSync(fd);
    if (!key) rmSync(where.file, { force: true });
    return key;
  } catch (error) {
    closeSync(fd);
    rmSync(where.file, { force: true });
    throw error;
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
function keyFromFile(path: string, log: InstallLog): string {
  refuseOthers(path, 'the secrets key file');
  try {
    const text = readFileSync(path, 'utf8');
    if ((statSync(path).mode & 0o077) !== 0) {
      log.warn({ path }, `${path} can be read by other users than its owner; chmod 600 it`);
    }
    parseKey(text, path);
    return text.trim();
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') {
      throw new ConfigError(`cannot use the secrets key file ${path}: ${(error as Error).message}`, ['SECRETS_KEY']);
    }
  }
  const key = newKeyText();
  // The key file is made before the database beside it: its folder is made private here, as the store would make it.
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process made it first: use theirs.
    if ((error as { code?: string }).code === 'EEXIST') return keyFromFile(path, log);
    throw new ConfigError(`cannot write the secrets key file ${path}: ${(error as Error).message}`, ['SECRETS_KEY']);
  }
  log.info(
    { path },
    `SECRETS_KEY is not set, so secrets are encrypted with a new key, kept in ${path} (mode 0600). ` +
      'Keep it with the database, and back it up with it: without it, stored registry passwords cannot be read.',
  );
  return key;
}

/**
 * The keys that seal secrets at rest: SECRETS_KEY, and SECRETS_KEY_PREVIOUS during a rotation. Without SECRETS_KEY,
 * PostgreSQL is refused (every process must share one key, so none may make its own), and SQLite uses the key file
 * beside its database, made on first start; an in-memory database gets a key that lives as long as it does.
 */
export function secretsKeyring(config: Config, log: InstallLog = stderrLog): Keyring {
  if (config.SECRETS_KEY) return Keyring.fromText(config.SECRETS_KEY, config.SECRETS_KEY_PREVIOUS);
  const file = sqliteFile(config.DATABASE_URL);
  if (file === undefined) {
    throw new ConfigError(
      'SECRETS_KEY must be set on PostgreSQL: it encrypts registry passwords at rest, and every process must use the same one. ' +
        MAKE_A_KEY,
      ['SECRETS_KEY'],
    );
  }
  return Keyring.fromText(file === ':memory:' ? newKeyText() : keyFromFile(keyFileOf(file), log));
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
      apiKeys: config.QUOTA_API_KEYS_PER_ACCOUNT,
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
