import { conflict, DomainError, forbidden, invalid, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { type ImageCheck, imageAfterChange, uncheckedImage } from '../domain/image-check.ts';
import type { ListPosition, ListScope, ListSort, Page } from '../domain/page.ts';
import { NO_QUOTAS, type Quotas } from '../domain/quota.ts';
import { notYourRegistryAuth, seesRegistryAuth } from '../domain/registry-auth.ts';
import {
  contentOf,
  diffContent,
  type FieldChange,
  type HistoryBounds,
  KEEP_ALL,
  prunedUpTo,
  type RevisionRecord,
} from '../domain/revision.ts';
import { checkReferences, scanPublicEnv } from '../domain/secret.ts';
import {
  applyUpdate,
  CONTENT_FIELDS,
  checkSentBack,
  newTemplateContent,
  searchFold,
  type TemplateContent,
  type TemplateCreate,
  type TemplateRecord,
  type TemplateUpdate,
  type TemplateView,
  withOwnerName,
  withoutRegistryAuth,
} from '../domain/template.ts';
import { now } from '../domain/time.ts';
import { sameReport, type UsageReport } from '../domain/usage.ts';
import { type Caller, hiddenOnlyByBinding, type IncludeFlags, isVisible, visibilityFor, widestVisibility } from '../domain/visibility.ts';
import { startRelease } from '../releases/releases.ts';
import type { Reads, Store, Transaction } from '../store/store.ts';
import { type Answer, type KeptAs, type Once, once } from './idempotency.ts';
import { withinQuotas } from './quotas.ts';

// Use cases of templates: create, read, list, update, delete, roll back, report usage.

/** A conditional write's condition (If-Match, If-None-Match): what it says against the revision it would change (why
 * it fails), or undefined when it holds. */
export type Precondition = (revision: number) => string | undefined;

export interface ListOptions extends IncludeFlags {
  scope?: ListScope;
  sort?: ListSort;
  category?: string;
  isServerless?: boolean;
  q?: string;
  limit: number;
  before?: ListPosition;
}

/** The popular order is a catalogue's: a 400 naming `sort` for a list that is not one scope of others' templates. */
function checkSort(options: ListOptions): void {
  if (options.sort === 'popular' && options.scope !== 'public' && options.scope !== 'platform') {
    throw invalid('sort=popular orders a catalogue: use it with scope=public or scope=platform.', [
      { in: 'query', path: '/sort', message: 'popular needs scope=public or scope=platform' },
    ]);
  }
  const popularCursor = options.before?.runtime !== undefined;
  if (options.before !== undefined && popularCursor !== (options.sort === 'popular')) {
    throw invalid('The cursor belongs to a list in another order; use the Link header of the page before.', [
      { in: 'query', path: '/cursor', message: `is not a cursor of the ${options.sort ?? 'newest'} order` },
    ]);
  }
}

const facts = (t: TemplateRecord) => ({ ...t, bound: t.endpointId !== null });

/** The template, if the caller owns it: 404 when the caller can't see it at all, 403 when it can but doesn't own it. */
async function ownTemplate(store: Reads, caller: Caller, id: string, lock = false): Promise<TemplateRecord> {
  const template = await store.templates.find(id, { lock });
  if (!template || !isVisible(widestVisibility(caller), facts(template))) throw notFound('template');
  if (template.ownerId !== caller.accountId) throw forbidden('Only the owner of a template may change it, roll it back or delete it.');
  return template;
}

/**
 * A template may refer only to a registry auth of its owner: checked in the write's transaction, with the auth held so
 * that it can't be deleted before the template that now refers to it commits (see RegistryAuthRepository.holdOwned).
 */
async function checkRegistryAuth(tx: Transaction, ownerId: string, content: TemplateContent): Promise<void> {
  const id = content.containerRegistryAuthId;
  if (id !== '' && !(await tx.registryAuths.holdOwned(id, ownerId))) throw notYourRegistryAuth();
}

/** A template's JSON text as `caller` may see it: with its registry auth id only for those who may know it. */
const shownTo = (caller: Caller, template: { ownerId: string; registryAuthId: string; json: string }): string =>
  seesRegistryAuth(caller, template.ownerId) ? template.json : withoutRegistryAuth(template.json, template.registryAuthId);

/** A rollback to a revision pruned since (see HistoryBounds): it was, and is no more. */
function notKept(revision: number, oldest: number | undefined, current: TemplateRecord): DomainError {
  const kept = `revisions ${oldest ?? current.revision} to ${current.revision}`;
  return conflict(
    `Revision ${revision} is no longer kept: a template keeps its newest revisions, and this one has ${kept}. ` +
      'Roll back to one of those, or update the template to the values you want.',
    [{ path: '/revision', message: `is no longer kept (this template keeps ${kept})` }],
  );
}

/** Refuses a write whose condition (If-Match, If-None-Match) the template's current revision does not meet: a 412 saying why. */
export function check(precondition: Precondition | undefined, template: TemplateRecord): void {
  const failed = precondition?.(template.revision);
  if (failed) throw new DomainError('precondition-failed', `The template is at revision ${template.revision}, ${failed}; read it again.`);
}

/** A template's env may refer to secrets only by well-formed names, and a public one may hold no literal token. */
function checkEnv(content: TemplateContent): void {
  checkReferences(content.env);
  scanPublicEnv(content);
}

/** Refuses, inside the write's transaction, a write that took the account past a quota (see domain/quota.ts). */

/**
 * A template answered to an Idempotency-Key is kept as everything but its content (which the revision it names keeps)
 * and rebuilt from that revision for a retry: no env value is kept beside the template, and none outlives it.
 */
const KEPT_TEMPLATE: KeptAs<TemplateRecord> = {
  reference: (template) => {
    const rest: Record<string, unknown> = { ...template };
    for (const field of CONTENT_FIELDS) delete rest[field];
    return JSON.stringify(rest);
  },
  rebuild: async (store, reference) => {
    const rest = JSON.parse(reference) as Omit<TemplateRecord, keyof TemplateContent>;
    const revision = await store.templates.findRevision(rest.id, rest.revision);
    return revision && ({ ...rest, ...revision.snapshot } as TemplateRecord);
  },
};

/** What a change makes of a template: its content, and for a rollback or a repin, the image's pin and check. */
interface Changed {
  content: TemplateContent;
  /** The pin the new revision takes (a rollback's target's, a repin's); undefined: as the change makes it. */
  pin?: string | null;
  /** The new revision's check, when the change brings its own (a repin's). */
  imageCheck?: ImageCheck;
}

/** How templates are written: quotas, history bounds, and whether images are checked (IMAGE_CHECK). */
interface Writing {
  quotas: Quotas;
  history: HistoryBounds;
  imageChecks: boolean;
}

/** What users do with templates: each use case one transaction. */
export class Templates {
  private readonly store: Store;
  private readonly writing: Writing;

  constructor(store: Store, quotas: Quotas = NO_QUOTAS, history: HistoryBounds = KEEP_ALL, imageChecks = false) {
    this.store = store;
    this.writing = { quotas, history, imageChecks };
  }

  private get quotas(): Quotas {
    return this.writing.quotas;
  }

  create(caller: Caller, input: TemplateCreate, request?: Once<TemplateRecord>): Promise<Answer<TemplateRecord>> {
    const at = now();
    const template: TemplateRecord = {
      id: newId(),
      ...newTemplateContent(input),
      isPlatform: caller.role === 'platform',
      earned: 0,
      runtimeInMin: 0,
      revision: 1,
      createdAt: at,
      updatedAt: at,
      imageCheck: uncheckedImage(this.writing.imageChecks),
      ownerId: caller.accountId,
      endpointId: null,
    };
    checkEnv(template);
    return once(this.store, caller.accountId, request, KEPT_TEMPLATE, this.quotas, async (tx) => {
      await checkRegistryAuth(tx, template.ownerId, template);
      await withinQuotas(tx, caller.accountId, this.quotas, async () => {
        // Its image is checked after the commit (usecases/image-checks.ts): due now, even with checks off, for when they are on.
        await tx.templates.insert(template, at);
        await tx.templates.insertRevision({
          templateId: template.id,
          revision: 1,
          snapshot: contentOf(template),
          diff: [],
          keyId: caller.keyId,
          createdAt: at,
          imageDigest: null,
        });
      });
      return template;
    });
  }

  async get(caller: Caller, id: string, flags: IncludeFlags): Promise<TemplateView> {
    const view = await this.store.templates.findView(id);
    if (view && hiddenOnlyByBinding(caller, flags, view))
      throw new DomainError(
        'not-found',
        'This template of yours runs on an endpoint, and such templates are shown only with includeEndpointBoundTemplates=true.',
      );
    if (!view || !isVisible(visibilityFor(caller, flags), view)) throw notFound('template');
    return { ...view, json: shownTo(caller, view) };
  }

  /** A page of the templates the caller can see, as their JSON representations. */
  async list(caller: Caller, options: ListOptions): Promise<Page<string, ListPosition>> {
    checkSort(options);
    const page = await this.store.templates.list({
      visibility: visibilityFor(caller, options),
      scope: options.scope,
      sort: options.sort,
      category: options.category,
      isServerless: options.isServerless,
      search: options.q === undefined ? undefined : searchFold(options.q),
      limit: options.limit,
      before: options.before,
    });
    return { items: page.items.map((t) => withOwnerName(shownTo(caller, t), t.ownerName)), next: page.next };
  }

  update(caller: Caller, id: string, update: TemplateUpdate, precondition?: Precondition): Promise<TemplateRecord> {
    return this.store.transaction((tx) =>
      change(tx, caller, id, precondition, this.writing, async (current) => {
        // Against the row as locked, so a concurrent change can't slip between; the owner is the caller, named only if asked.
        const ownerName = update.ownerName === undefined ? '' : ((await tx.accounts.nameOf(current.ownerId)) ?? '');
        checkSentBack({ ...current, ownerName }, update);
        return { content: applyUpdate(current, update) };
      }),
    );
  }

  rollback(
    caller: Caller,
    id: string,
    revision: number,
    precondition?: Precondition,
    request?: Once<TemplateRecord>,
  ): Promise<Answer<TemplateRecord>> {
    return once(this.store, caller.accountId, request, KEPT_TEMPLATE, this.quotas, (tx) =>
      change(tx, caller, id, precondition, this.writing, async (current) => {
        const target = await tx.templates.findRevision(id, revision);
        if (!target && revision >= 1 && revision <= current.revision)
          throw notKept(revision, await tx.templates.oldestRevision(id), current);
        if (!target) {
          throw invalid(`Revision ${revision} does not exist; this template has revisions 1 to ${current.revision}.`, [
            { path: '/revision', message: `is not a revision of this template (1 to ${current.revision})` },
          ]);
        }
        // The target's own digest is rolled out again, not whatever its tag points at now.
        return { content: { ...target.snapshot, category: current.category, isServerless: current.isServerless }, pin: target.imageDigest };
      }),
    );
  }

  /**
   * Pins the template to `digest`, as a check of its tag found it (`check`, verified): a new revision whose diff shows
   * the digest's change, and a rolling release on its endpoint; the same digest changes nothing. The image and its
   * credentials must be those the check read (`read`), or the pin is refused (409): the template changed meanwhile.
   */
  repin(
    caller: Caller,
    id: string,
    read: Pick<TemplateContent, 'imageName' | 'containerRegistryAuthId'>,
    check: ImageCheck & { digest: string },
    precondition?: Precondition,
  ): Promise<TemplateRecord> {
    return this.store.transaction((tx) =>
      change(tx, caller, id, precondition, this.writing, async (current) => {
        if (current.imageName !== read.imageName || current.containerRegistryAuthId !== read.containerRegistryAuthId) {
          throw conflict('The template changed while its tag was read: repin it again.');
        }
        return { content: contentOf(current), pin: check.digest, imageCheck: check };
      }),
    );
  }

  delete(caller: Caller, id: string, precondition?: Precondition): Promise<void> {
    return this.store.transaction(async (tx) => {
      const template = await ownTemplate(tx, caller, id, true);
      check(precondition, template);
      if (template.endpointId !== null || !(await tx.templates.delete(id, template.revision))) {
        throw new DomainError('conflict', 'The template is bound to an endpoint; delete the endpoint first.');
      }
    });
  }

  async revisions(caller: Caller, id: string, limit: number, before?: number): Promise<Page<RevisionRecord>> {
    await ownTemplate(this.store, caller, id);
    return this.store.templates.listRevisions(id, limit, before);
  }

  /** Adds a usage report to a template's runtime and earnings, once per usageId (platform keys only). */
  async reportUsage(caller: Caller, id: string, usage: UsageReport): Promise<TemplateRecord> {
    if (caller.role !== 'platform') throw forbidden('Only platform keys report usage.');
    return this.store.transaction(async (tx) => {
      if (!(await tx.templates.find(id, { lock: true }))) throw notFound('template');
      const report = { ...usage, templateId: id };
      if (await tx.usage.insert({ ...report, createdAt: now() })) {
        await tx.templates.addUsage(id, usage.runtimeInMin, usage.earned);
      } else {
        const earlier = await tx.usage.find(usage.usageId);
        if (earlier && !sameReport(earlier, report)) {
          throw new DomainError('conflict', 'This usageId was reported before with other values; it is counted once.', [
            { path: '/usageId', message: 'was reported before with other values' },
          ]);
        }
      }
      return (await tx.templates.find(id)) as TemplateRecord;
    });
  }
}

/**
 * Changes a template the caller owns to `contentFor(current)`, under the row's lock: a new revision, and a rolling
 * release for its endpoint, in the transaction `tx`. A change to nothing changes nothing.
 */
async function change(
  tx: Transaction,
  caller: Caller,
  id: string,
  precondition: Precondition | undefined,
  writing: Writing,
  changedFrom: (current: TemplateRecord) => Promise<Changed>,
): Promise<TemplateRecord> {
  const current = await ownTemplate(tx, caller, id, true);
  check(precondition, current);
  const { content, pin, imageCheck } = await changedFrom(current);
  const currentPin = (await tx.templates.findRevision(id, current.revision))?.imageDigest ?? null;
  const image = imageAfterChange(current, content, currentPin, pin, writing.imageChecks);
  const diff: FieldChange[] = [...diffContent(current, content), ...(image.digestChange ? [image.digestChange] : [])];
  if (diff.length === 0) return current;
  checkEnv(content);
  await checkRegistryAuth(tx, current.ownerId, content);
  const at = now();
  const next: TemplateRecord = {
    ...current,
    ...content,
    imageCheck: imageCheck ?? image.imageCheck,
    revision: current.revision + 1,
    updatedAt: at,
  };
  await withinQuotas(tx, caller.accountId, writing.quotas, async () => {
    if (!(await tx.templates.replace(next, current.revision))) throw new Error(`template ${id} changed under its lock`);
    await tx.templates.insertRevision({
      templateId: id,
      revision: next.revision,
      snapshot: contentOf(next),
      diff,
      keyId: caller.keyId,
      createdAt: at,
      imageDigest: image.pin,
    });
    // The image is checked after the commit, never in this transaction (usecases/image-checks.ts).
    if (imageCheck) await tx.imageChecks.answered(id, next.revision);
    else if (image.recheck) await tx.imageChecks.request(id, next.revision, at);
    await tx.templates.pruneRevisions(id, prunedUpTo(next.revision, writing.history.revisionsKept));
    await startRelease(tx, next, diff, at, writing.history.releasesKept);
  });
  return next;
}
