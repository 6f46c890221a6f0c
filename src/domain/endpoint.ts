import { type Static, Type } from '@sinclair/typebox';
import { nameSchema } from './name.ts';

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
