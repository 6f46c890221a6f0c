import { conflict, DomainError, forbidden, invalid, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { ListPosition, ListScope, ListSort, Page } from '../domain/page.ts';
import { NO_QUOTAS, type Quotas, quotaExceeded, templateBytes } from '../domain/quota.ts';
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
import { type Caller, type IncludeFlags, isVisible, visibilityFor, widestVisibility } from '../domain/visibility.ts';
import { startRelease } from '../releases/releases.ts';
import type { Reads, Store, Transaction } from '../store/store.ts';
import { type Answer, type Once, once } from './idempotency.ts';

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

function check(precondition: Precondition | undefined, template: TemplateRecord): void {
  const failed = precondition?.(template.revision);
  if (failed) throw new DomainError('precondition-failed', `The template is at revision ${template.revision}, ${failed}; read it again.`);
}

/** A template's env may refer to secrets only by well-formed names, and a public one may hold no literal token. */
function checkEnv(content: TemplateContent): void {
  checkReferences(content.env);
  scanPublicEnv(content);
}

/** Refuses, inside the write's transaction, a write that took the account past a quota (see domain/quota.ts). */
async function withinQuotas(tx: Transaction, accountId: string, added: { templates?: number; templateBytes?: number }, quotas: Quotas) {
  const grows = ((added.templates ?? 0) > 0 && quotas.templates > 0) || ((added.templateBytes ?? 0) > 0 && quotas.bytes > 0);
  if (!grows) return;
  const problem = quotaExceeded(await tx.accounts.usage(accountId), added, quotas);
  if (problem) throw problem;
}

/** What users do with templates: each use case one transaction. */
export class Templates {
  private readonly store: Store;
  private readonly quotas: Quotas;
  private readonly history: HistoryBounds;

  constructor(store: Store, quotas: Quotas = NO_QUOTAS, history: HistoryBounds = KEEP_ALL) {
    this.store = store;
    this.quotas = quotas;
    this.history = history;
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
      ownerId: caller.accountId,
      endpointId: null,
    };
    checkEnv(template);
    return once(this.store, caller.accountId, request, async (tx) => {
      await checkRegistryAuth(tx, template.ownerId, template);
      await tx.templates.insert(template);
      await tx.templates.insertRevision({
        templateId: template.id,
        revision: 1,
        snapshot: contentOf(template),
        diff: [],
        keyId: caller.keyId,
        createdAt: at,
      });
      await withinQuotas(tx, caller.accountId, { templates: 1, templateBytes: templateBytes(template) }, this.quotas);
      return template;
    });
  }

  async get(caller: Caller, id: string, flags: IncludeFlags): Promise<TemplateView> {
    const view = await this.store.templates.findView(id);
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
      change(tx, caller, id, precondition, this.quotas, this.history, async (current) => {
        // Against the row as locked, so a concurrent change can't slip between; the owner is the caller, named only if asked.
        const ownerName = update.ownerName === undefined ? '' : ((await tx.accounts.nameOf(current.ownerId)) ?? '');
        checkSentBack({ ...current, ownerName }, update);
        return applyUpdate(current, update);
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
    return once(this.store, caller.accountId, request, (tx) =>
      change(tx, caller, id, precondition, this.quotas, this.history, async (current) => {
        const target = await tx.templates.findRevision(id, revision);
        if (!target && revision >= 1 && revision <= current.revision)
          throw notKept(revision, await tx.templates.oldestRevision(id), current);
        if (!target) {
          throw invalid(`Revision ${revision} does not exist; this template has revisions 1 to ${current.revision}.`, [
            { path: '/revision', message: `is not a revision of this template (1 to ${current.revision})` },
          ]);
        }
        return { ...target.snapshot, category: current.category, isServerless: current.isServerless };
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
  quotas: Quotas,
  history: HistoryBounds,
  contentFor: (current: TemplateRecord) => Promise<TemplateContent>,
): Promise<TemplateRecord> {
  const current = await ownTemplate(tx, caller, id, true);
  check(precondition, current);
  const content = await contentFor(current);
  const diff: FieldChange[] = diffContent(current, content);
  if (diff.length === 0) return current;
  checkEnv(content);
  await checkRegistryAuth(tx, current.ownerId, content);
  const at = now();
  const next: TemplateRecord = { ...current, ...content, revision: current.revision + 1, updatedAt: at };
  if (!(await tx.templates.replace(next, current.revision))) throw new Error(`template ${id} changed under its lock`);
  await withinQuotas(tx, caller.accountId, { templateBytes: templateBytes(next) - templateBytes(current) }, quotas);
  await tx.templates.insertRevision({
    templateId: id,
    revision: next.revision,
    snapshot: contentOf(next),
    diff,
    keyId: caller.keyId,
    createdAt: at,
  });
  await tx.templates.pruneRevisions(id, prunedUpTo(next.revision, history.revisionsKept));
  await startRelease(tx, next, diff, at, history.releasesKept);
  return next;
}
