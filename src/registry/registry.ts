import { IDEMPOTENCY_RETENTION_MS } from '../domain/idempotency.ts';
import { Releases } from '../releases/releases.ts';
import type { DatabaseFigures, Store } from '../store/store.ts';
import { Endpoints } from './endpoints.ts';
import { Keys } from './keys.ts';
import { Templates } from './templates.ts';

export type { DatabaseFigures };

export interface RegistryOptions {
  /** How long a key lookup is cached: the longest a key revoked elsewhere may still be accepted. */
  keyCacheTtlMs: number;
}

/**
 * The application: what users, operators and the platform do, each use case one transaction over the store.
 * HTTP and the CLI reach the data through it and nothing else.
 */
export class Registry {
  readonly templates: Templates;
  readonly endpoints: Endpoints;
  readonly releases: Releases;
  readonly keys: Keys;

  constructor(
    private readonly store: Store,
    options: RegistryOptions,
  ) {
    this.templates = new Templates(store);
    this.endpoints = new Endpoints(store);
    this.releases = new Releases(store);
    this.keys = new Keys(store, options.keyCacheTtlMs);
  }

  /** Resolves when the database answers. */
  ready(): Promise<void> {
    return this.store.ping();
  }

  /** How the database is being used (its pool, its group commits), for /metrics. */
  databaseFigures(): DatabaseFigures {
    return this.store.figures();
  }

  /** Forgets the responses kept for Idempotency-Keys once their retention has passed; how many. */
  forgetExpiredResponses(): Promise<number> {
    return this.store.idempotency.forgetBefore(new Date(Date.now() - IDEMPOTENCY_RETENTION_MS).toISOString());
  }
}
