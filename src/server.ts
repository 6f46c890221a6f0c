import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.ts';
import { type Config, readConfig } from './config.ts';
import { isKind } from './domain/errors.ts';
import { Registry } from './registry/registry.ts';
import { Deliverer } from './releases/deliverer.ts';
import { dialectFor } from './store/dialect.ts';
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

/** The store `config` names: its database, pool and time limits. */
export function openStore(config: Config, poolSize = config.DB_POOL_SIZE): Store {
  const dialect = dialectFor(config.DATABASE_URL, {
    poolSize,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectionTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
  });
  return Store.open(dialect, { transactionTimeoutMs: config.DB_TRANSACTION_TIMEOUT_MS });
}

/** The process: config, logger, database, listen, and a graceful shutdown on SIGTERM/SIGINT. */
export async function serve(config: Config = readConfig()): Promise<void> {
  const store = openStore(config);
  await migrateWhenReachable(store);
  const registry = new Registry(store, { keyCacheTtlMs: config.KEY_CACHE_TTL_MS });
  const first = await registry.keys.bootstrap();
  if (first) {
    // The one time a key is shown by the server: on first start, so that somebody can sign in at all.
    process.stderr.write(
      `\nNo API key existed, so a platform key was created. It is shown this once; store it now:\n\n  ${first.secret}\n\n`,
    );
  }

  const app = await buildApp({ registry, config, logger: { level: config.LOG_LEVEL } });
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
  // Stored responses to Idempotency-Keys are kept 24 hours, then forgotten.
  const housekeeping = setInterval(() => registry.forgetExpiredResponses().catch(() => {}), 60 * 60 * 1000).unref();
  // SIGTERM or SIGINT: stop accepting connections, let the requests in flight finish (those arriving on open
  // connections are served, with `Connection: close`), stop the deliverer between attempts, close the database.
  // Past the grace period the process exits anyway (1); a second signal ends it at once.
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_SECONDS * 1000, logger: app.log }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an uncaught error');
    else app.log.info({ signal }, 'shutting down: draining in-flight requests');
    clearInterval(housekeeping);
    await Promise.all([app.close(), deliverer?.stop()]);
    await store.close();
  });

  await app.listen({ host: config.HOST, port: config.PORT });
  deliverer?.start();
}
