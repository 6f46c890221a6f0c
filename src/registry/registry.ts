import { IDEMPOTENCY_RETENTION_MS } from '../domain/idempotency.ts';
import { Releases } from '../releases/releases.ts';
import type { Keyring } from '../secrets/keyring.ts';
import type { Store } from '../store/store.ts';
import { Endpoints } from './endpoints.ts';
import { Keys } from './keys.ts';
import { RegistryAuths } from './registry-auths.ts';
import { Secrets } from './secrets.ts';
import { Templates } from './templates.ts';

export interface RegistryOptions {
  /** How long a key lookup is cached: the longest a key revoked elsewhere may still be accepted. */
  keyCacheTtlMs: number;
  /**
   * The keys that seal secrets at rest (registry passwords). Only what seals or opens a secret needs them: without,
   * those use cases fail, and the rest (the admin's key commands) works.
   */
  keyring?: Keyring;
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
  readonly registryAuths: RegistryAuths;
  readonly secrets: Secrets;

  constructor(
    private readonly store: Store,
    options: RegistryOptions,
  ) {
    this.templates = new Templates(store);
    this.endpoints = new Endpoints(store);
    this.releases = new Releases(store);
    this.keys = new Keys(store, options.keyCacheTtlMs);
    const keyring = () => {
      if (!options.keyring) throw new Error('This registry was made without the keys that seal secrets (RegistryOptions.keyring).');
      return options.keyring;
    };
    this.registryAuths = new RegistryAuths(store, keyring);
    this.secrets = new Secrets(store, keyring);
  }

  /** Resolves when the database answers. */
  ready(): Promise<void> {
    return this.store.ping();
  }

  /** Forgets the responses kept for Idempotency-Keys once their retention has passed; how many. */
  forgetExpiredResponses(): Promise<number> {
    return this.store.idempotency.forgetBefore(new Date(Date.now() - IDEMPOTENCY_RETENTION_MS).toISOString());
  }
}
