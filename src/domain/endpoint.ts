import { type Static, Type } from '@sinclair/typebox';
import { conflict } from './errors.ts';
import { nameSchema } from './name.ts';
import type { FieldChange } from './revision.ts';
import type { Caller } from './visibility.ts';

// A Serverless endpoint, only as far as binding a template and rolling releases need it.

export const ENDPOINT_DEFAULTS = { workersMin: 0, workersMax: 3 };

export const EndpointCreate = Type.Object(
  {
    name: nameSchema('Name of the endpoint, unique among the endpoints of its owner.'),
    templateId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'A Serverless template of your own, not bound to another endpoint.',
    }),
    workersMin: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, default: ENDPOINT_DEFAULTS.workersMin, description: 'Workers kept running at all times.' }),
    ),
    workersMax: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        default: ENDPOINT_DEFAULTS.workersMax,
        description: 'Most workers running at once; at least workersMin.',
      }),
    ),
  },
  { additionalProperties: false, $id: 'EndpointCreateInput', title: 'EndpointCreateInput' },
);
export type EndpointCreate = Static<typeof EndpointCreate>;

export const Endpoint = Type.Object(
  {
    id: Type.String({ description: 'Unique identifier of the endpoint.' }),
    name: Type.String(),
    templateId: Type.String({ description: 'The template the endpoint runs.' }),
    workersMin: Type.Integer(),
    workersMax: Type.Integer(),
    version: Type.Integer({ minimum: 1, description: '1 at creation; one more with each rolling release.' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Endpoint', title: 'Endpoint', additionalProperties: false },
);
export type Endpoint = Static<typeof Endpoint>;

/** An endpoint as stored. Its `version` moves on with each rolling release. */
export interface EndpointRecord {
  id: string;
  ownerId: string;
  name: string;
  templateId: string;
  workersMin: number;
  workersMax: number;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** Who may act on an endpoint: its owner, and the platform (the orchestrator acts on every endpoint). */
export const mayActOn = (caller: Pick<Caller, 'accountId' | 'role'>, endpoint: EndpointRecord, asPlatform = false): boolean =>
  endpoint.ownerId === caller.accountId || (asPlatform && caller.role === 'platform');

// The releases of an endpoint belong to it: a release is how a change of the bound template reaches its workers.

export const RELEASE_STATUSES = ['pending', 'rolling', 'completed', 'failed', 'superseded'] as const;
export type ReleaseStatus = (typeof RELEASE_STATUSES)[number];
/** A release in one of these changes no more. */
export const FINISHED_STATUSES: ReleaseStatus[] = ['completed', 'failed', 'superseded'];

export interface ReleaseRecord {
  id: string;
  endpointId: string;
  version: number;
  templateId: string;
  templateRevision: number;
  diff: FieldChange[];
  status: ReleaseStatus;
  workersUpdated: number;
  workersTotal: number;
  createdAt: string;
  updatedAt: string;
}

/** How far the webhook announcing a release has got. */
export interface DeliveryState {
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string;
  deliveredAt: string | null;
}

export const endpointNameTaken = () =>
  conflict('You already have an endpoint with this name.', [
    { path: '/name', message: 'is already the name of another of your endpoints' },
  ]);
export const templateAlreadyBound = () =>
  conflict('The template is already bound to an endpoint.', [{ path: '/templateId', message: 'is already bound to an endpoint' }]);
