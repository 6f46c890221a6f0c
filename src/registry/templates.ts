import { conflict, DomainError, forbidden, invalid, notFound } from '../domain/errors.ts';
import type { UsageReport } from '../domain/release.ts';
import { contentOf, diffContent, type FieldChange } from '../domain/revision.ts';
import { applyUpdate, newTemplateContent, type TemplateContent, type TemplateCreate, type TemplateUpdate } from '../domain/template.ts';
import { type Caller, type IncludeFlags, isVisible, visibilityFor, widestVisibility } from '../domain/visibility.ts';
import { NameTaken, type Page, type RevisionRecord, type Store, type TemplateRecord, type TemplateView } from '../store/store.ts';
import { newId, now } from './ids.ts';
import { startRelease } from './releases.ts';

const NAME_TAKEN = { path: '/name', message: 'is already the name of another of your templates' };

/** A conditional write's condition: does the template's current revision satisfy the request (If-Match)? */
export type Precondition = (revision: number) => boolean;

const facts = (t: TemplateRecord) => ({ ...t, bound: t.endpointId !== null });

function renamed<T>(work: Promise<T>): Promise<T> {
  return work.catch((error) => {
    throw error instanceof NameTaken ? conflict('You already have a template with this name.', [NAME_TAKEN]) : error;
  });
}

export function createTemplate(store: Store, caller: Caller, input: TemplateCreate): Promise<TemplateRecord> {
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
  return renamed(
    store.transaction(async (tx) => {
      await tx.insertTemplate(template);
      await tx.insertRevision({
        templateId: template.id,
        revision: 1,
        snapshot: contentOf(template),
        diff: [],
        keyId: caller.keyId,
        createdAt: at,
      });
      return template;
    }),
  );
}

export async function getTemplate(store: Store, caller: Caller, id: string, flags: IncludeFlags): Promise<TemplateView> {
  const view = await store.findTemplateView(id);
  if (!view || !isVisible(visibilityFor(caller, flags), view)) throw notFound('template');
  return view;
}

/** The template, if the caller owns it: 404 when the caller can't see it at all, 403 when it can but doesn't own it. */
export async function ownTemplate(store: Store, caller: Caller, id: string, lock = false): Promise<TemplateRecord> {
  const template = await store.findTemplate(id, { lock });
  if (!template || !isVisible(widestVisibility(caller), facts(template))) throw notFound('template');
  if (template.ownerId !== caller.accountId) throw forbidden('Only the owner of a template may change it, roll it back or delete it.');
  return template;
}

function check(precondition: Precondition | undefined, template: TemplateRecord): void {
  if (precondition && !precondition(template.revision)) {
    throw new DomainError(
      'precondition-failed',
      `The template is at revision ${template.revision}, which If-Match does not name; read it again.`,
    );
  }
}

/**
 * Changes a template the caller owns to `contentFor(current)`, under the row's lock: a new revision, and a rolling
 * release for its endpoint, in one transaction. A change to nothing changes nothing.
 */
function change(
  store: Store,
  caller: Caller,
  id: string,
  precondition: Precondition | undefined,
  contentFor: (current: TemplateRecord, tx: Store) => Promise<TemplateContent>,
): Promise<TemplateRecord> {
  return renamed(
    store.transaction(async (tx) => {
      const current = await ownTemplate(tx, caller, id, true);
      check(precondition, current);
      const content = await contentFor(current, tx);
      const diff: FieldChange[] = diffContent(current, content);
      if (diff.length === 0) return current;
      const at = now();
      const next: TemplateRecord = { ...current, ...content, revision: current.revision + 1, updatedAt: at };
      if (!(await tx.replaceTemplate(next, current.revision))) throw new Error(`template ${id} changed under its lock`);
      await tx.insertRevision({
        templateId: id,
        revision: next.revision,
        snapshot: contentOf(next),
        diff,
        keyId: caller.keyId,
        createdAt: at,
      });
      await startRelease(tx, next, diff, at);
      return next;
    }),
  );
}

export function updateTemplate(store: Store, caller: Caller, id: string, update: TemplateUpdate, precondition?: Precondition) {
  return change(store, caller, id, precondition, async (current) => applyUpdate(current, update));
}

export function rollbackTemplate(store: Store, caller: Caller, id: string, revision: number, precondition?: Precondition) {
  return change(store, caller, id, precondition, async (current, tx) => {
    const target = await tx.findRevision(id, revision);
    if (!target) {
      throw invalid(`Revision ${revision} does not exist; this template has revisions 1 to ${current.revision}.`, [
        { path: '/revision', message: `is not a revision of this template (1 to ${current.revision})` },
      ]);
    }
    return { ...target.snapshot, category: current.category, isServerless: current.isServerless };
  });
}

export function deleteTemplate(store: Store, caller: Caller, id: string, precondition?: Precondition): Promise<void> {
  return store.transaction(async (tx) => {
    const template = await ownTemplate(tx, caller, id, true);
    check(precondition, template);
    if (template.endpointId !== null || !(await tx.deleteTemplate(id, template.revision))) {
      throw conflict('The template is bound to an endpoint; delete the endpoint first.');
    }
  });
}

export async function listRevisions(
  store: Store,
  caller: Caller,
  id: string,
  limit: number,
  before?: number,
): Promise<Page<RevisionRecord>> {
  await ownTemplate(store, caller, id);
  return store.listRevisions(id, limit, before);
}

export interface ListOptions extends IncludeFlags {
  category?: string;
  isServerless?: boolean;
  q?: string;
  limit: number;
  before?: number;
}

/** A page of the templates the caller can see, as their JSON representations. */
export function listTemplates(store: Store, caller: Caller, options: ListOptions): Promise<Page<string>> {
  return store.listTemplates({
    visibility: visibilityFor(caller, options),
    category: options.category,
    isServerless: options.isServerless,
    search: options.q?.toLowerCase(),
    limit: options.limit,
    before: options.before,
  });
}

/** Adds a usage report to a template's runtime and earnings, once per usageId (platform keys only). */
export function reportUsage(store: Store, caller: Caller, id: string, usage: UsageReport): Promise<TemplateRecord> {
  if (caller.role !== 'platform') throw forbidden('Only platform keys report usage.');
  return store.transaction(async (tx) => {
    if (!(await tx.findTemplate(id, { lock: true }))) throw notFound('template');
    const counted = await tx.addUsage({ ...usage, templateId: id, createdAt: now() });
    if (!counted) {
      const earlier = await tx.findUsage(usage.usageId);
      if (earlier && (earlier.templateId !== id || earlier.runtimeInMin !== usage.runtimeInMin || earlier.earned !== usage.earned)) {
        throw conflict('This usageId was reported before with other values; it is counted once.', [
          { path: '/usageId', message: 'was reported before with other values' },
        ]);
      }
    }
    return (await tx.findTemplate(id)) as TemplateRecord;
  });
}
