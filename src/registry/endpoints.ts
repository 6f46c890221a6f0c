import { ENDPOINT_DEFAULTS, type EndpointCreate } from '../domain/endpoint.ts';
import { conflict, invalid, notFound } from '../domain/errors.ts';
import type { Caller } from '../domain/visibility.ts';
import { AlreadyBound, type EndpointRecord, NameTaken, type Store } from '../store/store.ts';
import { newId, now } from './ids.ts';

export async function createEndpoint(store: Store, caller: Caller, input: EndpointCreate): Promise<EndpointRecord> {
  const { workersMin, workersMax } = { ...ENDPOINT_DEFAULTS, ...input };
  if (workersMax < workersMin) {
    throw invalid('workersMax must be at least workersMin.', [
      { path: '/workersMax', message: `must be at least workersMin (${workersMin})` },
    ]);
  }
  const template = await store.findTemplate(input.templateId);
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
  try {
    await store.createEndpoint(endpoint);
  } catch (error) {
    if (error instanceof AlreadyBound) {
      throw conflict('The template is already bound to an endpoint.', [
        { path: '/templateId', message: 'is already bound to an endpoint' },
      ]);
    }
    if (error instanceof NameTaken) {
      throw conflict('You already have an endpoint with this name.', [
        { path: '/name', message: 'is already the name of another of your endpoints' },
      ]);
    }
    throw error;
  }
  return endpoint;
}

export async function getEndpoint(store: Store, caller: Caller, id: string): Promise<EndpointRecord> {
  const endpoint = await store.findEndpoint(id);
  if (!endpoint || endpoint.ownerId !== caller.accountId) throw notFound('endpoint');
  return endpoint;
}

export async function deleteEndpoint(store: Store, caller: Caller, id: string): Promise<void> {
  await getEndpoint(store, caller, id);
  if (!(await store.deleteEndpoint(id))) throw notFound('endpoint');
}
