import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalid } from '../../domain/errors.ts';
import type { Answer, Once, Response } from '../../usecases/idempotency.ts';

// The HTTP side of Idempotency-Key (as in the IETF draft): which request a key names, and how its answer is sent.
// The use case keeps the response in the transaction of the write (usecases/idempotency.ts).

/** What an Idempotency-Key may be: 1 to 255 printable ASCII characters (the schemas publish this pattern). */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x20-\\x7e]{1,255}$';
export const IDEMPOTENCY_KEY_MESSAGE = 'must be 1 to 255 printable ASCII characters';
const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

/** The Idempotency-Key header of an operation's schema, `retry` saying what a retry gets. */
export const idempotencyKeyHeader = (retry: string) => ({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: IDEMPOTENCY_KEY_PATTERN,
      errorMessage: IDEMPOTENCY_KEY_MESSAGE,
      description: `Retry safely: ${retry} Another body with the same key gets a 422. 1 to 255 printable ASCII characters.`,
    }),
  ),
});

/** What a write answers with: a body to serialize and its headers. */
export interface Outcome {
  payload: unknown;
  headers: Record<string, string>;
  /** 200 unless given. */
  status?: number;
}

/** The request's Idempotency-Key, if it has one: the write is then done once, and answered as `outcome` says. */
export function idempotencyOf<T>(request: FastifyRequest, reply: FastifyReply, outcome: (result: T) => Outcome): Once<T> | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw invalid('Idempotency-Key must be 1 to 255 printable ASCII characters.', [
      { in: 'header', path: '/idempotency-key', message: IDEMPOTENCY_KEY_MESSAGE },
    ]);
  }
  const requestHash = createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url} ${JSON.stringify(request.params)}\n${JSON.stringify(request.body)}`)
    .digest('hex');
  return {
    key,
    requestHash,
    respond: (result) => {
      const { payload, headers, status = 200 } = outcome(result);
      const body = reply.serializeInput(payload as Record<string, unknown>, String(status), 'application/json') as string;
      return { status, headers, body };
    },
  };
}

const sendStored = (reply: FastifyReply, stored: Response) =>
  reply.code(stored.status).headers(stored.headers).type('application/json; charset=utf-8').send(stored.body);

/** Sends what a write answered: a response kept for its key (replayed, or first made), or its result. */
export function sendAnswer<T>(reply: FastifyReply, answer: Answer<T>, outcome: (result: T) => Outcome): FastifyReply {
  if ('replay' in answer) return sendStored(reply.header('idempotent-replayed', 'true'), answer.replay);
  if (answer.response) return sendStored(reply, answer.response);
  const { payload, headers, status = 200 } = outcome(answer.result);
  return reply.code(status).headers(headers).send(payload);
}
