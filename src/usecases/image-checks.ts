import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { conflict, forbidden, notFound, RateLimited, unavailable } from '../domain/errors.ts';
import { failedCheck, type ImageCheck, judge } from '../domain/image-check.ts';
import { imageLocation } from '../domain/image-reference.ts';
import type { TemplateRecord } from '../domain/template.ts';
import { now } from '../domain/time.ts';
import { type Caller, isVisible, widestVisibility } from '../domain/visibility.ts';
import { type Lookup, PerKeyLimit, Reacher } from '../images/guard.ts';
import { inspectImage } from '../images/inspect.ts';
import { type Credentials, RegistryError } from '../images/registry.ts';
import { backoffMs } from '../releases/deliverer.ts';
import type { Keyring } from '../sealing/keyring.ts';
import { REGISTRY_AUTH_PASSWORDS, sealedContext } from '../store/sealed.ts';
import type { Store } from '../store/store.ts';
import type { ClaimedCheck } from '../store/templates/image-checks.ts';
import type { Limits } from './limits.ts';
import { check as checkPrecondition, type Precondition, type Templates } from './templates.ts';

// Image checks: a template's image read at its registry after the write that changed it (never inside it), by any
// process of the install, one at a time per template; on demand; and the repin of a tag to the digest it serves now.

export interface ImageCheckOptions {
  /** IMAGE_CHECK: off, no registry is asked and templates show `off`. */
  enabled: boolean;
  /** host[:port] an operator lets checks reach over plain http, whatever their address (IMAGE_CHECK_INSECURE_REGISTRIES). */
  insecureRegistries: string[];
  /** Each request to a registry must be answered within this time. */
  requestTimeoutMs: number;
  /** An unreachable registry is asked again after about this long, twice as long each time, up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Checks one process runs at once against one registry. */
  perRegistry: number;
  /** Checks of one account's templates a minute; 0 turns the bound off. */
  perAccountPerMinute: number;
  /** How often each process looks for due checks. */
  pollMs: number;
  /** Resolves registry host names (tests); the system's resolver by default. */
  resolve?: Lookup;
}

export const IMAGE_CHECKS_OFF: ImageCheckOptions = {
  enabled: false,
  insecureRegistries: [],
  requestTimeoutMs: 10_000,
  retryBaseMs: 30_000,
  retryMaxMs: 3_600_000,
  perRegistry: 4,
  perAccountPerMinute: 30,
  pollMs: 1000,
};

/** Checks one process claims at a time. */
const BATCH = 8;
/** Requests one check makes at most (manifest, token, manifest again, platform manifest, config), with room to spare. */
const REQUESTS_PER_CHECK = 8;

/** What a check reads: the template's image as it was when the check was taken, and the pin of its revision. */
interface Subject {
  template: TemplateRecord;
  pin: string | null;
}

export class ImageChecks {
  private readonly store: Store;
  private readonly keyring: () => Keyring;
  private readonly limits: Limits;
  private readonly templates: Templates;
  private readonly options: ImageCheckOptions;
  /** The ways out to registries: made when first needed, closed by `stop`. */
  private openReacher: Reacher | undefined;
  private readonly perRegistry: PerKeyLimit;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  constructor(store: Store, keyring: () => Keyring, limits: Limits, templates: Templates, options: ImageCheckOptions) {
    this.store = store;
    this.keyring = keyring;
    this.limits = limits;
    this.templates = templates;
    this.options = options;
    this.perRegistry = new PerKeyLimit(options.perRegistry);
  }

  get enabled(): boolean {
    return this.options.enabled;
  }

  private get reacher(): Reacher {
    this.openReacher ??= new Reacher({
      insecure: new Set(this.options.insecureRegistries.map((host) => host.toLowerCase())),
      connectTimeoutMs: this.options.requestTimeoutMs,
      resolve: this.options.resolve,
    });
    return this.openReacher;
  }

  /** How long a process holds a check: longer than the check may take, which its own deadline bounds. */
  private get leaseMs(): number {
    return this.options.requestTimeoutMs * REQUESTS_PER_CHECK + 5000;
  }

  /** Runs the due checks from now on, every `pollMs` (none with checks off). */
  start(): void {
    if (!this.options.enabled || !this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops taking checks, and waits for those under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => {});
    const reacher = this.openReacher;
    this.openReacher = undefined;
    await reacher?.close();
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const run = this.runDue().catch(() => false);
      this.running = run;
      void run.then((busy) => this.schedule(busy ? 0 : this.options.pollMs));
    }, delay);
    this.timer.unref();
  }

  /** Runs the checks that are due, a batch at a time; true when there may be more right away. */
  async runDue(): Promise<boolean> {
    const lease = randomUUID();
    const at = Date.now();
    const claimed = await this.store.transaction((tx) =>
      tx.imageChecks.claimDue(new Date(at).toISOString(), new Date(at + this.leaseMs).toISOString(), lease, BATCH),
    );
    await Promise.all(claimed.map((check) => this.run(check, lease, true)));
    return claimed.length === BATCH;
  }

  /**
   * Checks the template's image now, for its owner or a platform key, and answers the template with the result. A check
   * of it under way in another process is waited for. Beyond IMAGE_CHECKS_PER_ACCOUNT_PER_MINUTE, a 429.
   */
  async checkNow(caller: Caller, id: string): Promise<TemplateRecord> {
    const template = await this.store.templates.find(id);
    // Platform keys act on every template (as they resolve any for a launch); others on those they see.
    const seen =
      template && (caller.role === 'platform' || isVisible(widestVisibility(caller), { ...template, bound: template.endpointId !== null }));
    if (!template || !seen) throw notFound('template');
    if (template.ownerId !== caller.accountId && caller.role !== 'platform') {
      throw forbidden("Only the template's owner or a platform key may check its image.");
    }
    if (!this.options.enabled) return template;
    if (caller.role !== 'platform') await this.withinRate(template.ownerId);
    await this.store.transaction(async (tx) => {
      const current = await tx.templates.find(id, { lock: true });
      if (!current) throw notFound('template');
      await tx.imageChecks.request(id, current.revision, now());
    });
    const lease = randomUUID();
    const deadline = Date.now() + this.leaseMs * 2;
    while (Date.now() < deadline) {
      const at = Date.now();
      const claimed = await this.store.transaction((tx) =>
        tx.imageChecks.claim(id, new Date(at).toISOString(), new Date(at + this.leaseMs).toISOString(), lease),
      );
      if (claimed) {
        await this.run(claimed, lease, false);
        break;
      }
      // Another process holds it: its result answers this request too, once it is settled.
      const queued = await this.store.imageChecks.queued(id);
      if (!queued || queued.dueAt === null || Date.parse(queued.dueAt) > at) break;
      await sleep(100);
    }
    const checked = await this.store.templates.find(id);
    if (!checked) throw notFound('template');
    return checked;
  }

  /**
   * Reads the template's tag again (its owner only): a digest other than its pin makes a new revision pinned to it (a
   * rolling release for its endpoint), the same changes nothing. A tag that can't be pinned changes nothing: 409 with
   * the reason (no such tag, refused credentials, no linux/amd64 image, too large), 503 when the registry is unreachable.
   */
  async repin(caller: Caller, id: string, precondition?: Precondition): Promise<TemplateRecord> {
    const template = await this.store.templates.find(id);
    if (!template || !isVisible(widestVisibility(caller), { ...template, bound: template.endpointId !== null })) throw notFound('template');
    if (template.ownerId !== caller.accountId) throw forbidden('Only the owner of a template may repin it.');
    checkPrecondition(precondition, template);
    if (!this.options.enabled) throw conflict('Image checks are off on this install (IMAGE_CHECK=off): no digest can be read to pin.');
    await this.withinRate(template.ownerId);
    const check = await this.inspect({ template, pin: null }, now());
    if (check.status === 'unreachable') throw unavailable(check.reason ?? 'The registry did not answer.');
    if (check.status !== 'verified' || check.digest === null) {
      throw conflict(`The tag can't be pinned: ${check.reason ?? 'the check failed.'}`, [
        { path: '/imageName', message: 'its tag gave no image to pin' },
      ]);
    }
    return this.templates.repin(caller, id, template, { ...check, digest: check.digest }, precondition);
  }

  /** Takes a check from the account's budget: a 429 when it is spent. */
  private async withinRate(accountId: string): Promise<void> {
    const wait = await this.takeCheck(accountId);
    if (wait > 0) {
      throw new RateLimited(
        `This account's templates may have ${this.options.perAccountPerMinute} image checks a minute; try again later.`,
        Math.ceil(wait / 1000),
      );
    }
  }

  private takeCheck(accountId: string): Promise<number> {
    const perMinute = this.options.perAccountPerMinute;
    return perMinute > 0 ? this.limits.take(`image-checks:${accountId}`, perMinute) : Promise.resolve(0);
  }

  /** Runs one claimed check and settles it: its result kept unless another was asked for since it was claimed. */
  private async run(claimed: ClaimedCheck, lease: string, budgeted: boolean): Promise<void> {
    const template = await this.store.templates.find(claimed.templateId);
    if (!template) return;
    if (budgeted) {
      const wait = await this.takeCheck(template.ownerId);
      if (wait > 0) {
        const later = new Date(Date.now() + wait).toISOString();
        await this.store.transaction((tx) => tx.imageChecks.settle(template, lease, { dueAt: later }));
        return;
      }
    }
    const pin = (await this.store.templates.findRevision(template.id, template.revision))?.imageDigest ?? null;
    const check = await this.inspect({ template, pin }, now());
    await this.store.transaction(async (tx) => {
      const current = await tx.templates.find(template.id, { lock: true });
      const queued = await tx.imageChecks.queued(template.id);
      if (!current || !queued || queued.lease !== lease) return;
      if (queued.revision !== claimed.revision || current.imageName !== template.imageName) {
        // Asked again since (the image changed): this result is not the answer; the check stays due.
        await tx.imageChecks.settle(current, lease, { dueAt: queued.dueAt ?? now() });
        return;
      }
      const retry = check.status === 'unreachable';
      const dueAt = retry
        ? new Date(Date.now() + backoffMs(queued.attempts, this.options.retryBaseMs, this.options.retryMaxMs)).toISOString()
        : null;
      await tx.imageChecks.settle(current, lease, { check, dueAt });
      if (check.status === 'verified' && check.digest) await tx.imageChecks.pin(template.id, claimed.revision, check.digest);
    });
  }

  /** Reads the subject's image at its registry (its pin, else its tag): the check's result. Never throws for the registry's sake. */
  private async inspect(subject: Subject, at: string): Promise<ImageCheck> {
    const { template, pin } = subject;
    const location = imageLocation(template.imageName);
    const auth = await this.credentials(template);
    const named = { imageName: template.imageName, registryAuthName: auth?.name ?? null, digest: pin };
    try {
      const facts = await this.perRegistry.run(location.registry, () =>
        inspectImage(location, pin ?? location.digest ?? location.tag, auth?.credentials ?? null, {
          reacher: this.reacher,
          requestTimeoutMs: this.options.requestTimeoutMs,
          deadline: AbortSignal.timeout(this.leaseMs - 5000),
        }),
      );
      return judge(facts, template.containerDiskInGb, at);
    } catch (error) {
      if (!(error instanceof RegistryError)) {
        return failedCheck({ kind: 'unreachable', reason: 'The check could not be run; it is retried later.' }, named, at);
      }
      if (error.kind === 'denied') return failedCheck({ kind: 'denied', given: auth !== undefined }, named, at);
      if (error.kind === 'not-found') return failedCheck({ kind: 'not-found' }, named, at);
      return failedCheck({ kind: error.kind, reason: error.message }, named, at);
    }
  }

  /** The credentials of the template's registry auth, opened for this check alone; undefined when it names none. */
  private async credentials(template: TemplateRecord): Promise<{ name: string; credentials: Credentials } | undefined> {
    if (template.containerRegistryAuthId === '') return undefined;
    const auth = await this.store.registryAuths.findSealed(template.containerRegistryAuthId);
    if (!auth || auth.ownerId !== template.ownerId) return undefined;
    const password = this.keyring().open(auth.sealedPassword, sealedContext(REGISTRY_AUTH_PASSWORDS, auth.id));
    return { name: auth.name, credentials: { username: auth.username, password } };
  }
}
