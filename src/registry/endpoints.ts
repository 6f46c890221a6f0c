import { ENDPOINT_DEFAULTS, type EndpointCreate, type EndpointRecord, mayActOn } from '../domain/endpoint.ts';
import { invalid, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Page } from '../domain/page.ts';
import { NO_QUOTAS, type Quotas, quotaExceeded } from '../domain/quota.ts';
import { now } from '../domain/time.ts';
import type { Caller } from '../domain/visibility.ts';
import type { Store } from '../store/store.ts';

/** What users do with their Serverless endpoints: each use case one transaction. */
export class Endpoints {
  constructor(
    private readonly store: Store,
    private readonly quotas: Quotas = NO_QUOTAS,
  ) {}

  async create(caller: Caller, input: EndpointCreate): Promise<EndpointRecord> {
    const { workersMin, workersMax } = { ...ENDPOINT_DEFAULTS, ...input };
    if (workersMax < workersMin) {
      throw invalid('workersMax must be at least workersMin.', [
        { path: '/workersMax', message: `must be at least workersMin (${workersMin})` },
      ]);
    }
    return this.store.transaction(async (tx) => {
      const template = await tx.templates.find(input.templateId, { lock: true });
      // Someone else's template gets the same answer as a missing one: binding must not reveal private templates.
      if (!template || template.ownerId !== caller.accountId) {
        throw invalid('templateId must name a template of your own.', [
          { path: '/templateId', message: 'is not the id of a template of yours' },
        ]);
      }
      if (!template.isServerless) {
        throw invalid('Only a Serverless template can be bound to an endpoint.', [
          { path: '/templateId', message: 'names a Pod template; an endpoint needs a Serverless template' },
        ]);
      }
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
      await tx.endpoints.create(endpoint);
      if (this.quotas.endpoints > 0) {
        const problem = quotaExceeded(await tx.accounts.usage(caller.accountId), { endpoints: 1 }, this.quotas);
        if (problem) throw problem;
      }
      return endpoint;
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
