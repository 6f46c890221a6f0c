import { setFlagsFromString } from 'node:v8';
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { type Config, readConfig } from './config.ts';
import { migrateWhenReachable, openStore, podplateOf, secretsKeyring } from './install.ts';
import { Deliverer } from './releases/deliverer.ts';
import { sqliteFilesOpenToOthers } from './store/dialect.ts';

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

/** The process: config, logger, database, listen, and a graceful shutdown on SIGTERM/SIGINT. */
export async function serve(config: Config = readConfig()): Promise<void> {
  boundHeapGrowth(config.HEAP_GROWTH_PERCENT);
  const keyring = secretsKeyring(config);
  const store = openStore(config);
  await migrateWhenReachable(store);
  // The read cache, invalidated by the database's own change signal (on PostgreSQL, a connection that LISTENs).
  await store.startCache();
  const podplate = podplateOf(store, config, keyring);
  try {
    await podplate.sealing.checkKey();
  } catch (error) {
    await store.close();
    throw error;
  }
  const first = await podplate.keys.bootstrap();
  if (first) {
    // The one time a key is shown by the server: on first start, so that somebody can sign in at all.
    process.stderr.write(
      `\nNo API key existed, so a platform key was created. It is shown this once; store it now:\n\n  ${first.secret}\n\n`,
    );
  }

  const app = await buildApp({ podplate, config, logger: { level: config.LOG_LEVEL } });
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
    await store.close();
  });

  await app.listen({ host: config.HOST, port: config.PORT });
  deliverer?.start();
}
