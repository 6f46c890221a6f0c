import { DomainError, invalid, notFound } from '../domain/errors.ts';
import { progressProblem, type ReleaseProgress } from '../domain/release.ts';
import type { FieldChange } from '../domain/revision.ts';
import type { Caller } from '../domain/visibility.ts';
import type { DeliveryState, EndpointRecord, Page, ReleaseRecord, Store, TemplateRecord } from '../store/store.ts';
import { getEndpoint } from './endpoints.ts';
import { newId, now } from './ids.ts';

export const RELEASE_CREATED = 'release.created';

/**
 * Starts a rolling release of `template` on the endpoint bound to it, inside the caller's transaction:
 * the release, the endpoint's new version and the outbox event commit together with the change, or not at all.
 */
export async function startRelease(
  tx: Store,
  template: TemplateRecord,
  diff: FieldChange[],
  at: string,
): Promise<ReleaseRecord | undefined> {
  if (template.endpointId === null) return undefined;
  const endpoint = await tx.findEndpoint(template.endpointId);
  if (!endpoint) return undefined;
  const release: ReleaseRecord = {
    id: newId(),
    endpointId: endpoint.id,
    version: endpoint.version + 1,
    templateId: template.id,
    templateRevision: template.revision,
    diff,
    status: 'pending',
    workersUpdated: 0,
    workersTotal: 0,
    createdAt: at,
    updatedAt: at,
  };
  await tx.insertRelease(release);
  const eventId = `evt_${release.id}`;
  await tx.enqueue({
    eventId,
    type: RELEASE_CREATED,
    subjectId: release.id,
    orderingKey: endpoint.id,
    payload: JSON.stringify(releaseEvent(release, endpoint, template)),
    createdAt: at,
  });
  return release;
}

/** The webhook body announcing a release: enough for the orchestrator to act without calling back. */
function releaseEvent(release: ReleaseRecord, endpoint: EndpointRecord, template: TemplateRecord) {
  const { ownerId: _owner, endpointId: _endpoint, ...shown } = template;
  return {
    type: RELEASE_CREATED,
    timestamp: release.createdAt,
    data: {
      release: {
        id: release.id,
        version: release.version,
        templateRevision: release.templateRevision,
        diff: release.diff,
        status: release.status,
      },
      endpoint: { id: endpoint.id, name: endpoint.name, workersMin: endpoint.workersMin, workersMax: endpoint.workersMax },
      template: shown,
    },
  };
}

/** The endpoint, for its owner or a platform key (the orchestrator acts on every endpoint). */
async function endpointFor(store: Store, caller: Caller, endpointId: string): Promise<EndpointRecord> {
  if (caller.role !== 'platform') return getEndpoint(store, caller, endpointId);
  const endpoint = await store.findEndpoint(endpointId);
  if (!endpoint) throw notFound('endpoint');
  return endpoint;
}

const NEVER_TRIED: DeliveryState = { attempts: 0, lastError: null, nextAttemptAt: '', deliveredAt: null };

async function withDelivery(store: Store, releases: ReleaseRecord[]) {
  const deliveries = await store.deliveries(releases.map((r) => r.id));
  return releases.map((r) => {
    const delivery = deliveries.get(r.id) ?? { ...NEVER_TRIED, nextAttemptAt: r.createdAt };
    return { ...r, delivery };
  });
}

export async function listReleases(store: Store, caller: Caller, endpointId: string, limit: number, before?: number) {
  await endpointFor(store, caller, endpointId);
  const page: Page<ReleaseRecord> = await store.listReleases(endpointId, limit, before);
  return { items: await withDelivery(store, page.items), next: page.next };
}

export async function reportProgress(store: Store, caller: Caller, endpointId: string, releaseId: string, progress: ReleaseProgress) {
  if (caller.role !== 'platform') throw new DomainError('forbidden', 'Only platform keys report the progress of releases.');
  const release = await store.transaction(async (tx) => {
    await endpointFor(tx, caller, endpointId);
    const current = await tx.findRelease(releaseId, { lock: true });
    if (!current || current.endpointId !== endpointId) throw notFound('release');
    const problem = progressProblem(current.status, progress);
    if (problem?.path === '/status') throw new DomainError('conflict', `The release is ${current.status}; it changes no more.`, [problem]);
    if (problem) throw invalid('workersUpdated must be at most workersTotal.', [problem]);
    const next = { ...current, ...progress, updatedAt: now() };
    await tx.updateReleaseProgress(next);
    return next;
  });
  const [shown] = await withDelivery(store, [release]);
  return shown as NonNullable<typeof shown>;
}
