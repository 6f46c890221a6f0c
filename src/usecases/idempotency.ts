import { DomainError } from '../domain/errors.ts';
import type { StoredResponse } from '../store/idempotency.ts';

export type { StoredResponse };

import { now } from '../domain/time.ts';
import type { Store, Transaction } from '../store/store.ts';

// Idempotency-Key: a retry with the same key and request gets the first response again, byte for byte; the same
// key with another request is refused. The response commits in the same transaction as the write it answers, so
// a write is never done twice and never answered twice differently.

/** A write asked for with an Idempotency-Key. */
export interface Once<T> {
  key: string;
  /** Identifies the request (method, route, parameters, body). */
  requestHash: string;
  /** The response that answers the write, kept for its retries: made inside the write's transaction. */
  respond(result: T): Omit<StoredResponse, 'requestHash'>;
}

/** What a write asked for once answers: its result (and the response kept for retries), or an earlier response. */
export type Answer<T> = { result: T; response?: StoredResponse } | { replay: StoredResponse };

function replay<T>(stored: StoredResponse, request: Once<T>): Answer<T> {
  if (stored.requestHash !== request.requestHash) {
    throw new DomainError('idempotency-mismatch', 'This Idempotency-Key was used with another request; use a new key for a new request.', [
      { in: 'header', path: '/idempotency-key', message: 'was used before with another request' },
    ]);
  }
  return { replay: stored };
}

/** Runs `write` in a transaction, once per Idempotency-Key of the account when `request` has one. */
export async function once<T>(
  store: Store,
  accountId: string,
  request: Once<T> | undefined,
  write: (tx: Transaction) => Promise<T>,
): Promise<Answer<T>> {
  if (!request) return { result: await store.transaction(write) };
  const earlier = await store.idempotency.find(accountId, request.key);
  if (earlier) return replay(earlier, request);
  try {
    return await store.transaction(async (tx) => {
      const result = await write(tx);
      const response = { requestHash: request.requestHash, ...request.respond(result) };
      await tx.idempotency.insert(accountId, request.key, response, now());
      return { result, response };
    });
  } catch (error) {
    // A concurrent request with the same key may have won the race: then its response is ours too.
    const twin = await store.idempotency.find(accountId, request.key).catch(() => undefined);
    if (twin) return replay(twin, request);
    throw error;
  }
}
