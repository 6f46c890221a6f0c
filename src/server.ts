import { setFlagsFromString } from 'node:v8';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { ConfigError, readConfig } from './config.ts';
import { bootstrapKey, bootstrapKeyFile, migrateInstall, openStore, podplateOf, secretsKeyring } from './install.ts';
import { type Logger, levelFrom, processLogger } from './logger.ts';
import { FileError } from './private-files.ts';
import { Deliverer } from './releases/deliverer.ts';
import { KeyFormatError } from './sealing/keyring.ts';
import { sqliteFilesOpenToOthers } from './store/dialect.ts';
import { NewerSchema, type Store } from './store/store.ts';
import { SealingKeyMismatch } from './usecases/sealing.ts';

// The process: config, logger, listen, and a graceful shutdown. Opening the install is install.ts's.

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

/**
 * Why the start stopped, as one log line: what to do, the settings at fault. A bad setting, a database that can't be
 * used, a schema of a newer version, a sealing key that opens nothing: one line each, never a stack trace.
 */
function startFailure(error: unknown, port: string): { fields: Record<string, unknown>; message: string } {
  if (error instanceof ConfigError) return { fields: { settings: error.settings }, message: error.message };
  if (error instanceof NewerSchema) {
    return { fields: { newer: error.newer.map((m) => m.name), refused: error.refused.map((m) => m.name) }, message: error.message };
  }
  if (error instanceof FileError) return { fields: {}, message: error.message };
  if (error instanceof SealingKeyMismatch || error instanceof KeyFormatError) {
    return { fields: { settings: ['SECRETS_KEY'] }, message: error.message };
  }
  const code = (error as { code?: string }).code;
  if (code === 'EADDRINUSE')
    return { fields: { settings: ['PORT'] }, message: `PORT=${port} is in use by another process: choose another PORT` };
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return { fields: { settings: ['HOST'] }, message: 'HOST is not an address of this machine: use 127.0.0.1, 0.0.0.0 or one of its own' };
  }
  return { fields: { err: error }, message: 'the server could not start' };
}

/**
 * The server process: reads the settings, opens the install, listens, and shuts down gracefully on SIGTERM/SIGINT.
 * Every line it writes is one of its log's (JSON, pretty on a terminal). A start that can't go on is one fatal line
 * and exit 1.
 */
export async function serve(): Promise<void> {
  const log = await processLogger(levelFrom(process.env));
  let store: Store | undefined;
  try {
    const config = readConfig();
    log.level = config.LOG_LEVEL;
    boundHeapGrowth(config.HEAP_GROWTH_PERCENT);
    const keyring = secretsKeyring(config, log);
    store = openStore(config);
    await migrateInstall(store, config, log);
    // The read cache, invalidated by the database's own change signal (on PostgreSQL, a connection that LISTENs).
    await store.startCache();
    const podplate = podplateOf(store, config, keyring);
    await podplate.sealing.checkKey();
    // On a terminal it is shown there, unless BOOTSTRAP_KEY_FILE says where it goes (a container run with -t has a
    // terminal whose output is the container's log).
    await firstKey(podplate, process.stderr.isTTY && !config.BOOTSTRAP_KEY_FILE ? 'terminal' : bootstrapKeyFile(config), log);
    await listen(store, podplate, config, log);
  } catch (error) {
    const { fields, message } = startFailure(error, process.env.PORT ?? '8080');
    log.fatal(fields, message);
    await store?.close().catch(() => undefined);
    process.exit(1);
  }
}

/**
 * The first platform key, when the database holds none: shown once on the terminal (stderr), or written to a 0600
 * file whose path is logged. Never into a log stream.
 */
async function firstKey(podplate: ReturnType<typeof podplateOf>, file: string, log: Logger): Promise<void> {
  if (file === 'terminal') {
    await bootstrapKey(podplate, {
      show: (key) =>
        process.stderr.write(
          `\nNo API key existed, so a platform key was created. It is shown this once; store it now:\n\n  ${key.secret}\n\n`,
        ),
    });
    return;
  }
  const key = await bootstrapKey(podplate, { file });
  if (key) {
    log.warn(
      { file, keyId: key.id, account: key.account },
      `no API key existed, so a platform key was made and written to ${file} (mode 0600): read it, store it, and delete the file`,
    );
  }
}

async function listen(
  store: Store,
  podplate: ReturnType<typeof podplateOf>,
  config: ReturnType<typeof readConfig>,
  log: Logger,
): Promise<void> {
  const app = await buildApp({ podplate, config, logger: log });
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
  podplate.housekeeping.start();
  // Image checks run after the writes that asked for them, in every process, one at a time per template (IMAGE_CHECK).
  podplate.imageChecks.start();
  // SIGTERM or SIGINT: stop accepting connections, let the requests in flight finish (those arriving on open
  // connections are served, with `Connection: close`), stop the deliverer between attempts, close the database.
  // Past the grace period the process exits anyway (1); a second signal ends it at once.
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_SECONDS * 1000, logger: app.log }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down: draining in-flight requests');
    await Promise.all([app.close(), deliverer?.stop(), podplate.housekeeping.stop(), podplate.imageChecks.stop()]);
    await podplate.keys.usesWritten();
    await store.close();
  });

  await app.listen({ host: config.HOST, port: config.PORT });
  deliverer?.start();
}
