import { conflict, forbidden, notFound } from '../domain/errors.ts';
import { applyUpdate, newTemplateContent, type TemplateCreate, type TemplateUpdate } from '../domain/template.ts';
import { type Caller, type IncludeFlags, isVisible, visibilityFor, widestVisibility } from '../domain/visibility.ts';
import { NameTaken, type Store, type TemplatePage, type TemplateRecord } from '../store/store.ts';
import { newId, now } from './ids.ts';

const NAME_TAKEN = { path: '/name', message: 'is already the name of another of your templates' };

const facts = (t: TemplateRecord) => ({ ...t, bound: t.endpointId !== null });

export async function createTemplate(store: Store, caller: Caller, input: TemplateCreate): Promise<TemplateRecord> {
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
  try {
    await store.insertTemplate(template);
  } catch (error) {
    if (error instanceof NameTaken) throw conflict('You already have a template with this name.', [NAME_TAKEN]);
    throw error;
  }
  return template;
}

export async function getTemplate(store: Store, caller: Caller, id: string, flags: IncludeFlags): Promise<TemplateRecord> {
  const template = await store.findTemplate(id);
  if (!template || !isVisible(visibilityFor(caller, flags), facts(template))) throw notFound('template');
  return template;
}

/** The template, if the caller owns it: 404 when the caller can't see it at all, 403 when it can but doesn't own it. */
export async function ownTemplate(store: Store, caller: Caller, id: string, lock = false): Promise<TemplateRecord> {
  const template = await store.findTemplate(id, { lock });
  if (!template || !isVisible(widestVisibility(caller), facts(template))) throw notFound('template');
  if (template.ownerId !== caller.accountId) throw forbidden('Only the owner of a template may change or delete it.');
  return template;
}

export function updateTemplate(store: Store, caller: Caller, id: string, update: TemplateUpdate): Promise<TemplateRecord> {
  // Read, apply and write under the row's lock, so that concurrent updates apply one after the other.
  return store.transaction(async (tx) => {
    const current = await ownTemplate(tx, caller, id, true);
    const { content, changed } = applyUpdate(current, update);
    if (changed.length === 0) return current;
    const next: TemplateRecord = { ...current, ...content, revision: current.revision + 1, updatedAt: now() };
    try {
      if (!(await tx.replaceTemplate(next, current.revision))) throw new Error(`template ${id} changed under its lock`);
    } catch (error) {
      if (error instanceof NameTaken) throw conflict('You already have a template with this name.', [NAME_TAKEN]);
      throw error;
    }
    return next;
  });
}

export async function deleteTemplate(store: Store, caller: Caller, id: string): Promise<void> {
  const template = await ownTemplate(store, caller, id);
  const deleted = template.endpointId === null && (await store.deleteTemplate(id));
  // Not deleted and still there: bound to an endpoint, maybe only since it was read.
  if (!deleted && (await store.findTemplate(id))) {
    throw conflict('The template is bound to an endpoint; delete the endpoint first.');
  }
}

export interface ListOptions extends IncludeFlags {
  category?: string;
  isServerless?: boolean;
  q?: string;
  limit: number;
  before?: number;
}

export function listTemplates(store: Store, caller: Caller, options: ListOptions): Promise<TemplatePage> {
  return store.listTemplates({
    visibility: visibilityFor(caller, options),
    category: options.category,
    isServerless: options.isServerless,
    search: options.q?.toLowerCase(),
    limit: options.limit,
    before: options.before,
  });
}
