import { NO_QUOTAS, type Quotas } from '../domain/quota.ts';
import { type HistoryBounds, KEEP_ALL } from '../domain/revision.ts';
import { Releases } from '../releases/releases.ts';
import type { Keyring } from '../sealing/keyring.ts';
import type { DatabaseFigures, Store } from '../store/store.ts';
import { Accounts } from './accounts.ts';
import { Endpoints } from './endpoints.ts';
import { Housekeeping } from './housekeeping.ts';
import { IMAGE_CHECKS_OFF, type ImageCheckOptions, ImageChecks } from './image-checks.ts';
import { Keys } from './keys.ts';
import { Limits } from './limits.ts';
import { RegistryAuths } from './registry-auths.ts';
import { Sealing } from './sealing.ts';
import { Secrets } from './secrets.ts';
import { Templates } from './templates.ts';

// The application: every use case of users, operators and the platform, each one transaction over the store.

export type { DatabaseFigures };

export interface PodplateOptions {
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
  /** How templates' images are checked at their registries; off by default. */
  imageChecks?: ImageCheckOptions;
}

/**
 * The application: what users, operators and the platform do, each use case one transaction over the store.
 * HTTP and the CLI reach the data through it and nothing else.
 */
export class Podplate {
  readonly templates: Templates;
  readonly endpoints: Endpoints;
  readonly releases: Releases;
  readonly keys: Keys;
  /** Accounts, provisioned over the API by platform keys. */
  readonly accounts: Accounts;
  /** Token buckets: this process's own, or shared by every process of the install (see limits.ts). */
  readonly limits: Limits;
  readonly registryAuths: RegistryAuths;
  /** The keys that seal secrets at rest: the start-up check and rotation. */
  readonly sealing: Sealing;
  /** Purges what the database would otherwise keep for ever, from a timer the server starts (housekeeping.ts). */
  readonly housekeeping: Housekeeping;
  /** Accounts' own secrets, and templates resolved with them for a launch. */
  readonly secrets: Secrets;
  /** Templates' images checked at their registries: after each change (the server starts them), on demand, repinned. */
  readonly imageChecks: ImageChecks;

  private readonly store: Store;

  constructor(store: Store, options: PodplateOptions = {}) {
    this.store = store;
    const imageChecks = options.imageChecks ?? IMAGE_CHECKS_OFF;
    this.templates = new Templates(store, options.quotas ?? NO_QUOTAS, options.history ?? KEEP_ALL, imageChecks.enabled);
    this.endpoints = new Endpoints(store, options.quotas ?? NO_QUOTAS, options.history ?? KEEP_ALL);
    this.releases = new Releases(store);
    this.limits = new Limits(store.shared ? (...take) => store.transaction((tx) => tx.rateBuckets.take(...take)) : undefined);
    this.keys = new Keys(store, this.limits, options.authFailuresPerMinute ?? 0, options.quotas ?? NO_QUOTAS);
    this.accounts = new Accounts(store);
    const keyring = () => {
      if (!options.keyring) throw new Error('This Podplate was made without the keys that seal secrets (PodplateOptions.keyring).');
      return options.keyring;
    };
    this.registryAuths = new RegistryAuths(store, keyring, options.quotas ?? NO_QUOTAS);
    this.sealing = new Sealing(store, keyring);
    this.housekeeping = new Housekeeping(store, { outboxRetentionDays: options.outboxRetentionDays ?? 7 });
    this.secrets = new Secrets(store, keyring, options.quotas ?? NO_QUOTAS);
    this.imageChecks = new ImageChecks(store, keyring, this.limits, this.templates, imageChecks);
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
