import { type DeliveryState, type EndpointRecord, mayActOn, type ReleaseRecord } from '../domain/endpoint.ts';
import { DomainError, invalid, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { OutboxBacklog } from '../domain/outbox.ts';
import type { Page } from '../domain/page.ts';
import { type FieldChange, prunedUpTo } from '../domain/revision.ts';
import type { TemplateRecord } from '../domain/template.ts';
import { now } from '../domain/time.ts';
import type { Caller } from '../domain/visibility.ts';
import type { Reads, Store, Transaction } from '../store/store.ts';
import { progressProblem, type ReleaseProgress } from './release.ts';

// Releases as use cases: started inside the change of a bound template, listed, their progress reported.

export const RELEASE_CREATED = 'release.created';

/** The most releases one change prunes: a backlog (of releases kept while undelivered) goes this many at a time. */
const PRUNED_PER_CHANGE = 100;

/** A release as the API shows it: with the state of the webhook that announced it. */
/** A release as the API shows it: with its webhook's delivery to platform keys only (its errors are the receiver's). */
export type ShownRelease = ReleaseRecord & { delivery?: DeliveryState };

/**
 * Starts a rolling release of `template` on the endpoint bound to it, inside the transaction of the change:
 * the release, the endpoint's new version and the outbox event commit together with the change, or not at all.
 */
export async function startRelease(
  tx: Transaction,
  template: TemplateRecord,
  diff: FieldChange[],
  at: string,
  /** How many releases the endpoint keeps (RELEASES_KEPT_PER_ENDPOINT; 0 keeps all): every release counts. */
  releasesKept: number,
  /** A rebind: the template the endpoint ran until now, whose values the diff's `from` shows. */
  previousTemplateId: string | null = null,
): Promise<ReleaseRecord | undefined> {
  if (template.endpointId === null) return undefined;
  const endpoint = await tx.endpoints.find(template.endpointId);
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
    previousTemplateId,
    // The digest its revision is pinned to: the one a rollback brings back, not whatever the tag points at now.
    imageDigest: (await tx.templates.findRevision(template.id, template.revision))?.imageDigest ?? null,
  };
  await tx.endpoints.insertRelease(release);
  await tx.outbox.enqueue({
    eventId: `evt_${release.id}`,
    type: RELEASE_CREATED,
    subjectId: release.id,
    orderingKey: endpoint.id,
    accountId: endpoint.ownerId,
    payload: JSON.stringify(releaseEvent(release, endpoint, template)),
    createdAt: at,
  });
  await tx.endpoints.pruneReleases(endpoint.id, prunedUpTo(release.version, releasesKept), PRUNED_PER_CHANGE);
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
        imageDigest: release.imageDigest,
      },
      endpoint: { id: endpoint.id, name: endpoint.name, workersMin: endpoint.workersMin, workersMax: endpoint.workersMax },
      template: shown,
    },
  };
}

/** The endpoint, for its owner or a platform key (the orchestrator acts on every endpoint). */
async function endpointFor(store: Reads, caller: Caller, endpointId: string): Promise<EndpointRecord> {
  const endpoint = await store.endpoints.find(endpointId);
  if (!endpoint || !mayActOn(caller, endpoint, true)) throw notFound('endpoint');
  return endpoint;
}

const NEVER_TRIED: DeliveryState = { attempts: 0, lastError: null, nextAttemptAt: '', deliveredAt: null };

/** What users and the platform do with releases. */
export class Releases {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  async list(caller: Caller, endpointId: string, limit: number, before?: number): Promise<Page<ShownRelease>> {
    await endpointFor(this.store, caller, endpointId);
    const page = await this.store.endpoints.listReleases(endpointId, limit, before);
    return { items: caller.role === 'platform' ? await this.withDelivery(page.items) : page.items, next: page.next };
  }

  async reportProgress(caller: Caller, endpointId: string, releaseId: string, progress: ReleaseProgress): Promise<ShownRelease> {
    if (caller.role !== 'platform') throw new DomainError('forbidden', 'Only platform keys report the progress of releases.');
    const release = await this.store.transaction(async (tx) => {
      await endpointFor(tx, caller, endpointId);
      const current = await tx.endpoints.findRelease(releaseId, { lock: true });
      if (!current || current.endpointId !== endpointId) throw notFound('release');
      const problem = progressProblem(current.status, progress);
      if (problem?.path === '/status')
        throw new DomainError('conflict', `The release is ${current.status}; it changes no more.`, [problem]);
      if (problem) throw invalid('workersUpdated must be at most workersTotal.', [problem]);
      const next = { ...current, ...progress, updatedAt: now() };
      await tx.endpoints.updateReleaseProgress(next);
      return next;
    });
    const [shown] = await this.withDelivery([release]);
    return shown as ShownRelease;
  }

  /** Release webhooks not yet acknowledged by the receiver. */
  backlog(): Promise<OutboxBacklog> {
    return this.store.outbox.backlog();
  }

  private async withDelivery(releases: ReleaseRecord[]): Promise<ShownRelease[]> {
    const deliveries = await this.store.outbox.deliveries(releases.map((r) => r.id));
    return releases.map((r) => ({ ...r, delivery: deliveries.get(r.id) ?? { ...NEVER_TRIED, nextAttemptAt: r.createdAt } }));
  }
}
