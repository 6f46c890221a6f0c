import { type Static, Type } from '@sinclair/typebox';
import { conflict, type FieldError } from './errors.ts';
import { newNameSchema } from './name.ts';
import type { FieldChange } from './revision.ts';
import { STORABLE_TEXT, STORABLE_TEXT_MESSAGE } from './text.ts';
import type { Caller } from './visibility.ts';

// A Serverless endpoint, only as far as binding a template and rolling releases need it.

export const ENDPOINT_DEFAULTS = { workersMin: 0, workersMax: 3 };

export const EndpointCreate = Type.Object(
  {
    name: newNameSchema('Name of the endpoint, unique among the endpoints of its owner.'),
    templateId: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: STORABLE_TEXT,
      errorMessage: STORABLE_TEXT_MESSAGE,
      description: 'A Serverless template of your own, not bound to another endpoint (400 otherwise).',
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

const sentBack = (description: string) =>
  Type.Optional(Type.String({ maxLength: 64, pattern: STORABLE_TEXT, errorMessage: STORABLE_TEXT_MESSAGE, description }));

/**
 * A partial change of an endpoint: absent fields keep their value. An endpoint read with GET may be sent back
 * edited: its server-set fields are accepted when they equal the current values (400 naming them otherwise).
 */
export const EndpointUpdate = Type.Object(
  {
    name: Type.Optional(newNameSchema('New name of the endpoint, unique among the endpoints of its owner.')),
    templateId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: STORABLE_TEXT,
        errorMessage: STORABLE_TEXT_MESSAGE,
        description:
          'Rebinds the endpoint to another Serverless template of your own, not bound to another endpoint; ' +
          'the old template is unbound and a rolling release to the new one starts.',
      }),
    ),
    workersMin: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: 'Workers kept running at all times.' })),
    workersMax: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, description: 'Most workers running at once; at least workersMin.' }),
    ),
    id: sentBack('Read-only: accepted only with its current value.'),
    version: Type.Optional(Type.Integer({ minimum: 1, description: 'Read-only: accepted only with its current value.' })),
    createdAt: sentBack('Read-only: accepted only with its current value.'),
    updatedAt: sentBack('Read-only: accepted only with its current value.'),
  },
  { additionalProperties: false, $id: 'EndpointUpdateInput', title: 'EndpointUpdateInput' },
);
export type EndpointUpdate = Static<typeof EndpointUpdate>;

/** The server-set fields of an endpoint sent back by an update: each must equal its current value. */
export function sentBackProblems(current: EndpointRecord, update: EndpointUpdate): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of ['id', 'version', 'createdAt', 'updatedAt'] as const) {
    const sent = update[field];
    if (sent === undefined) continue;
    const value = current[field];
    const same = field === 'createdAt' || field === 'updatedAt' ? Date.parse(String(sent)) === Date.parse(String(value)) : sent === value;
    if (!same) {
      errors.push({
        path: `/${field}`,
        message: `is read-only: the server sets it; send its current value (${JSON.stringify(value)}) or leave it out`,
      });
    }
  }
  return errors;
}

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
  /** A rebind's release: the template the endpoint ran before (its values are in the diff's `from`); else null. */
  previousTemplateId: string | null;
  /** The image digest the release rolls out: its revision's pin when it started; null when it had none yet. */
  imageDigest: string | null;
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
