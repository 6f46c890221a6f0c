import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, invalid } from '../domain/errors.ts';
import { now } from '../registry/ids.ts';
import type { Store } from '../store/store.ts';

// Idempotency-Key (as in the IETF draft): a retry with the same key and request gets the first response again,
// byte for byte; the same key with another request is a 422. The stored response commits in the same
// transaction as the write it answers, so a write is never done twice and never answered twice differently.

const KEY = /^[\x20-\x7e]{1,255}$/;
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface Outcome {
  payload: unknown;
  headers: Record<string, string>;
}

function replay(reply: FastifyReply, stored: { status: number; headers: Record<string, string>; body: string }) {
  return reply
    .code(stored.status)
    .headers({ ...stored.headers, 'idempotent-replayed': 'true' })
    .type('application/json; charset=utf-8')
    .send(stored.body);
}

/** Runs a write once per Idempotency-Key; `write` runs inside the transaction that also stores its response. */
export async function idempotent(request: FastifyRequest, reply: FastifyReply, store: Store, write: (tx: Store) => Promise<Outcome>) {
  const key = request.headers['idempotency-key'];
  if (key === undefined) {
    const outcome = await write(store);
    return reply.headers(outcome.headers).send(outcome.payload);
  }
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw invalid('Idempotency-Key must be 1 to 255 printable ASCII characters.', [
      { in: 'header', path: '/idempotency-key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
  }
  const { accountId } = request.caller;
  const requestHash = createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url} ${JSON.stringify(request.params)}\n${JSON.stringify(request.body)}`)
    .digest('hex');
  const answer = (stored: { requestHash: string; status: number; headers: Record<string, string>; body: string }) => {
    if (stored.requestHash !== requestHash) {
      throw new DomainError(
        'idempotency-mismatch',
        'This Idempotency-Key was used with another request; use a new key for a new request.',
        [{ in: 'header', path: '/idempotency-key', message: 'was used before with another request' }],
      );
    }
    return replay(reply, stored);
  };

  const earlier = await store.findStoredResponse(accountId, key);
  if (earlier) return answer(earlier);
  try {
    const stored = await store.transaction(async (tx) => {
      const outcome = await write(tx);
      const response = {
        requestHash,
        status: 200,
        headers: outcome.headers,
        body: reply.serializeInput(outcome.payload as Record<string, unknown>, '200', 'application/json') as string,
      };
      await tx.storeResponse(accountId, key, response, now());
      return response;
    });
    return reply.headers(stored.headers).type('application/json; charset=utf-8').send(stored.body);
  } catch (error) {
    // A concurrent request with the same key may have won the race: then its response is ours too.
    const twin = await store.findStoredResponse(accountId, key).catch(() => undefined);
    if (twin) return answer(twin);
    throw error;
  }
}
