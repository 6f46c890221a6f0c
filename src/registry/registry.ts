import { NO_QUOTAS, type Quotas } from '../domain/quota.ts';
import { type HistoryBounds, KEEP_ALL } from '../domain/revision.ts';
import { Releases } from '../releases/releases.ts';
import type { Keyring } from '../secrets/keyring.ts';
import type { DatabaseFigures, Store } from '../store/store.ts';
import { AccountSecrets } from './account-secrets.ts';
import { Endpoints } from './endpoints.ts';
import { Housekeeping } from './housekeeping.ts';
import { Keys } from './keys.ts';
import { Limits } from './limits.ts';
import { RegistryAuths } from './registry-auths.ts';
import { Secrets } from './secrets.ts';
import { Templates } from './templates.ts';

export type { DatabaseFigures };

export interface RegistryOptions {
  /** Per account; 0 turns one off. */
  quotas?: Quotas;
  /** How many revisions a template keeps, and releases an endpoint; 0 keeps every one. */
  history?: HistoryBounds;
  /** Failed authentications one client address may make a minute before they are answered 429; 0 turns it off. */
  authFailuresPerMinute?: number;
  /**
   * The keys that seal secrets at rest (registry passwords, accounts' secrets). Only what seals or opens a secret needs them: without,
   * those use cases fail, and the rest (the admin's key commands) works.
   */
  keyring?: Keyring;
  /** Delivered webhook events are purged this many days after delivery (7 by default). */
  outboxRetentionDays?: number;
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
  /** Token buckets: this process's own, or shared by every process of the install (see limits.ts). */
  readonly limits: Limits;
  readonly registryAuths: RegistryAuths;
  /** The keys that seal secrets: the start-up check and rotation. */
  readonly secrets: Secrets;
  /** Purges what the database would otherwise keep for ever, from a timer the server starts (housekeeping.ts). */
  readonly housekeeping: Housekeeping;
  /** Accounts' own secrets, and templates resolved with them for a launch. */
  readonly accountSecrets: AccountSecrets;

  private readonly store: Store;

  constructor(store: Store, options: RegistryOptions = {}) {
    this.store = store;
    this.templates = new Templates(store, options.quotas ?? NO_QUOTAS, options.history ?? KEEP_ALL);
    this.endpoints = new Endpoints(store, options.quotas ?? NO_QUOTAS);
    this.releases = new Releases(store);
    this.limits = new Limits(store.shared ? store.rateBuckets : undefined);
    this.keys = new Keys(store, this.limits, options.authFailuresPerMinute ?? 0);
    const keyring = () => {
      if (!options.keyring) throw new Error('This registry was made without the keys that seal secrets (RegistryOptions.keyring).');
      return options.keyring;
    };
    this.registryAuths = new RegistryAuths(store, keyring, options.quotas ?? NO_QUOTAS);
    this.secrets = new Secrets(store, keyring);
    this.housekeeping = new Housekeeping(store, { outboxRetentionDays: options.outboxRetentionDays ?? 7 });
    this.accountSecrets = new AccountSecrets(store, keyring, options.quotas ?? NO_QUOTAS);
  }

  /** Resolves when the database answers. */
  ready(): Promise<void> {
    return this.store.ping();
  }

  /** How the database is being used (its pool, its group commits), for /metrics. */
  databaseFigures(): DatabaseFigures {
    return this.store.figures();
  }
}
