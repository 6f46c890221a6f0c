import { type Static, Type } from '@sinclair/typebox';
import { FINISHED_STATUSES, RELEASE_STATUSES, type ReleaseStatus } from '../domain/endpoint.ts';
import { FieldChangeSchema } from '../domain/revision.ts';

// A rolling release: how a change of a template reaches the workers of the endpoint bound to it. Its record is
// part of the endpoint's (domain/endpoint.ts); here are its API shapes and the rule of how it progresses.

/** A release in one of these states changes no more. */
const FINISHED: ReadonlySet<ReleaseStatus> = new Set(FINISHED_STATUSES);

export const ReleaseProgress = Type.Object(
  {
    status: Type.Unsafe<'rolling' | 'completed' | 'failed'>({
      type: 'string',
      enum: ['rolling', 'completed', 'failed'],
      description: 'Where the release stands now.',
    }),
    workersUpdated: Type.Integer({ minimum: 0, maximum: 100_000, description: 'Workers already on the new revision.' }),
    workersTotal: Type.Integer({ minimum: 0, maximum: 100_000, description: 'Workers the release has to update.' }),
  },
  { $id: 'ReleaseProgress', title: 'ReleaseProgress', additionalProperties: false },
);
export type ReleaseProgress = Static<typeof ReleaseProgress>;

/** Why `progress` can't be applied to a release in state `current`, or undefined when it can. */
export function progressProblem(current: ReleaseStatus, progress: ReleaseProgress): { path: string; message: string } | undefined {
  if (FINISHED.has(current)) return { path: '/status', message: `the release is ${current} and changes no more` };
  if (progress.workersUpdated > progress.workersTotal) return { path: '/workersUpdated', message: 'must be at most workersTotal' };
  return undefined;
}

export const Release = Type.Object(
  {
    id: Type.String({ description: 'Unique identifier of the release.' }),
    endpointId: Type.String(),
    version: Type.Integer({ minimum: 2, description: 'The endpoint version this release brings.' }),
    templateId: Type.String(),
    templateRevision: Type.Integer({ minimum: 1, description: 'The template revision being rolled out.' }),
    diff: Type.Array(Type.Ref(FieldChangeSchema), { description: 'What changed in the template.' }),
    status: Type.Unsafe<ReleaseStatus>({ type: 'string', enum: [...RELEASE_STATUSES] }),
    workersUpdated: Type.Integer({ minimum: 0 }),
    workersTotal: Type.Integer({ minimum: 0 }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    imageDigest: Type.Union([Type.String(), Type.Null()], {
      description:
        "The image digest the release rolls out (`name@digest`): its revision's pin; null when the image changed and its check " +
        'had not pinned one yet (the tag is rolled out).',
    }),
    delivery: Type.Optional(
      Type.Object(
        {
          attempts: Type.Integer({ minimum: 0, description: 'Webhook deliveries tried so far.' }),
          lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed; null once delivered.' }),
          nextAttemptAt: Type.String({ format: 'date-time', description: 'When the next attempt is due, if not delivered.' }),
          deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
            description: 'When the receiver acknowledged it.',
          }),
        },
        {
          description:
            'The webhook announcing the release: to platform keys only (a user key sees where the release stands, not the ' +
            "platform's deliveries or its receiver's errors).",
          additionalProperties: false,
        },
      ),
    ),
  },
  { $id: 'Release', title: 'Release', additionalProperties: false },
);
export type Release = Static<typeof Release>;
