import {
  ENDPOINT_DEFAULTS,
  type EndpointCreate,
  type EndpointRecord,
  type EndpointUpdate,
  mayActOn,
  sentBackProblems,
} from '../domain/endpoint.ts';
import { conflict, type FieldError, invalid, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Page } from '../domain/page.ts';
import { NO_QUOTAS, type Quotas } from '../domain/quota.ts';
import { contentOf, diffContent, type HistoryBounds, KEEP_ALL } from '../domain/revision.ts';
import type { TemplateRecord } from '../domain/template.ts';
import { now } from '../domain/time.ts';
import type { Caller } from '../domain/visibility.ts';
import { startRelease } from '../releases/releases.ts';
import type { Store } from '../store/store.ts';
import { withinQuotas } from './quotas.ts';

// Use cases of endpoints: create, bind, rebind, list and delete.

const POD = 'names a Pod template; an endpoint needs a Serverless template';
const POD_DETAIL = 'Only a Serverless template can be bound to an endpoint.';
const OWN_DETAIL = 'templateId must name a template of your own.';

/** Why a template can't be bound to an endpoint of the caller; undefined when it can. */
function bindingProblem(caller: Caller, template: TemplateRecord | undefined): FieldError | undefined {
  // Someone else's template gets the same answer as a missing one: binding must not reveal private templates.
  if (!template || template.ownerId !== caller.accountId) return { path: '/templateId', message: 'is not the id of a template of yours' };
  if (!template.isServerless) return { path: '/templateId', message: POD };
  return undefined;
}

/** What users do with their Serverless endpoints: each use case one transaction. */
export class Endpoints {
  private readonly store: Store;
  private readonly quotas: Quotas;
  private readonly history: HistoryBounds;

  constructor(store: Store, quotas: Quotas = NO_QUOTAS, history: HistoryBounds = KEEP_ALL) {
    this.store = store;
    this.quotas = quotas;
    this.history = history;
  }

  async create(caller: Caller, input: EndpointCreate): Promise<EndpointRecord> {
    const { workersMin, workersMax } = { ...ENDPOINT_DEFAULTS, ...input };
    if (workersMax < workersMin) {
      throw invalid('workersMax must be at least workersMin.', [
        { path: '/workersMax', message: `must be at least workersMin (${workersMin})` },
      ]);
    }
    return this.store.transaction(async (tx) => {
      const template = await tx.templates.find(input.templateId, { lock: true });
      const problem = bindingProblem(caller, template);
      if (problem || !template) throw invalid(problem?.message === POD ? POD_DETAIL : OWN_DETAIL, problem ? [problem] : []);
      const at = now();
      const endpoint: EndpointRecord = {
        id: newId(),
        ownerId: caller.accountId,
        name: input.name,
        templateId: template.id,
        workersMin,
        workersMax,
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      await withinQuotas(tx, caller.accountId, this.quotas, () => tx.endpoints.create(endpoint));
      return endpoint;
    });
  }

  /**
   * Renames, resizes or rebinds an endpoint. A rebind follows the rules of a create (a Serverless template of the
   * caller's own, not bound elsewhere), unbinds the old template and starts a rolling release to the new one, whose
   * diff is from the old template's content to the new one's. A change of name or workers starts no release, and an
   * update that changes nothing writes nothing.
   */
  async update(caller: Caller, id: string, input: EndpointUpdate): Promise<EndpointRecord> {
    return this.store.transaction(async (tx) => {
      const seen = await tx.endpoints.find(id);
      if (!seen || !mayActOn(caller, seen)) throw notFound('endpoint');
      const target = input.templateId ?? seen.templateId;
      // Template rows before the endpoint's, in a fixed order: the order every writer of both takes, so none deadlock.
      const templates = new Map<string, TemplateRecord | undefined>();
      if (target !== seen.templateId) {
        for (const templateId of [seen.templateId, target].sort())
          templates.set(templateId, await tx.templates.find(templateId, { lock: true }));
      }
      const current = await tx.endpoints.find(id, { lock: true });
      if (!current) throw notFound('endpoint');
      if (current.templateId !== seen.templateId) throw conflict('The endpoint was rebound by another request meanwhile; read it again.');
      const next: EndpointRecord = {
        ...current,
        name: input.name ?? current.name,
        templateId: target,
        workersMin: input.workersMin ?? current.workersMin,
        workersMax: input.workersMax ?? current.workersMax,
      };
      const errors = sentBackProblems(current, input);
      if (next.workersMax < next.workersMin) {
        errors.push({ path: '/workersMax', message: `must be at least workersMin (${next.workersMin})` });
      }
      const template = templates.get(target);
      const binding = target === current.templateId ? undefined : bindingProblem(caller, template);
      if (binding) errors.push(binding);
      if (errors.length > 0) {
        throw invalid(`The endpoint can't be changed so: ${errors.map((e) => e.path.slice(1)).join(', ')}.`, errors);
      }
      const changed = (['name', 'templateId', 'workersMin', 'workersMax'] as const).some((field) => next[field] !== current[field]);
      if (!changed) return current;
      const at = now();
      next.updatedAt = at;
      if (target !== current.templateId && template) {
        await tx.endpoints.rebind(id, current.templateId, target);
        await tx.endpoints.update(next);
        const before = templates.get(current.templateId);
        const diff = before ? diffContent(contentOf(before), contentOf(template)) : [];
        const release = await withinQuotas(tx, caller.accountId, this.quotas, () =>
          startRelease(tx, { ...template, endpointId: id }, diff, at, this.history.releasesKept, current.templateId),
        );
        return { ...next, version: release?.version ?? next.version };
      }
      await tx.endpoints.update(next);
      return next;
    });
  }

  async get(caller: Caller, id: string): Promise<EndpointRecord> {
    const endpoint = await this.store.endpoints.find(id);
    if (!endpoint || !mayActOn(caller, endpoint)) throw notFound('endpoint');
    return endpoint;
  }

  list(caller: Caller, limit: number, before?: number): Promise<Page<EndpointRecord>> {
    return this.store.endpoints.list(caller.accountId, limit, before);
  }

  async delete(caller: Caller, id: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const endpoint = await tx.endpoints.find(id);
      if (!endpoint || !mayActOn(caller, endpoint) || !(await tx.endpoints.delete(id))) throw notFound('endpoint');
    });
  }
}
