import { createHash } from 'node:crypto';
import { conflict, DomainError } from '../domain/errors.ts';
import { type Quotas, storedResponsesExceeded } from '../domain/quota.ts';
import { now } from '../domain/time.ts';
import type { StoredResponse } from '../store/idempotency.ts';
import type { Reads, Store, Transaction } from '../store/store.ts';

// Idempotency-Key: a retry with the same key and request gets the first response again, byte for byte; the same
// key with another request is refused. The response's record commits in the same transaction as the write it answers,
// so a write is never done twice and never answered twice differently. What is kept is not the response's body but a
// small reference to what the write answered with (a template at its revision) and the body's digest: a retry
// rebuilds the body and sends it if it is the same, so a large answer is not stored again, and what a deleted template
// held leaves nothing behind here. Each account keeps at most its quota of them (QUOTA_IDEMPOTENCY_KEYS_PER_ACCOUNT).

/** A response as sent: status, headers and body. */
export interface Response {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A write asked for with an Idempotency-Key. */
export interface Once<T> {
  key: string;
  /** Identifies the request (method, route, parameters, body). */
  requestHash: string;
  /** The response that answers the write with `result`: made inside the write's transaction, and again for a retry. */
  respond(result: T): Response;
}

/** How a write's result is kept for its retries: a small reference, and the result rebuilt from it. */
export interface KeptAs<T> {
  reference(result: T): string;
  /** The result again; undefined when what the reference names is no longer kept. */
  rebuild(store: Reads, reference: string): Promise<T | undefined>;
  /** Why the result can't be given again, when its kind says more than the general 409 (a key's secret, never kept). */
  lost?(reference: string): DomainError;
}

/** What a write asked for once answers: its result (and the response kept for retries), or an earlier response. */
export type Answer<T> = { result: T; response?: Response } | { replay: Response };

const digestOf = (body: string) => createHash('sha256').update(body).digest('base64url');

async function replay<T>(store: Reads, stored: StoredResponse, request: Once<T>, kept: KeptAs<T>): Promise<Answer<T>> {
  if (stored.requestHash !== request.requestHash) {
    throw new DomainError('idempotency-mismatch', 'This Idempotency-Key was used with another request; use a new key for a new request.', [
      { in: 'header', path: '/idempotency-key', message: 'was used before with another request' },
    ]);
  }
  // Kept before answers were kept by reference: the whole response.
  if (stored.answer === null) return { replay: stored };
  const result = await kept.rebuild(store, stored.answer);
  const response = result === undefined ? undefined : request.respond(result);
  if (!response || digestOf(response.body) !== stored.bodyDigest) {
    if (kept.lost) throw kept.lost(stored.answer);
    throw conflict(
      "This Idempotency-Key's request was done, but its answer can no longer be given: what it answered with has since " +
        'been deleted, or its revision is no longer kept. Read the resource to see its state, and use a new key for a new request.',
      [{ in: 'header', path: '/idempotency-key', message: 'answered a request whose answer is no longer kept' }],
    );
  }
  return { replay: { status: stored.status, headers: stored.headers, body: response.body } };
}

/** Runs `write` in a transaction, once per Idempotency-Key of the account when `request` has one. */
export async function once<T>(
  store: Store,
  accountId: string,
  request: Once<T> | undefined,
  kept: KeptAs<T>,
  quotas: Quotas,
  write: (tx: Transaction) => Promise<T>,
): Promise<Answer<T>> {
  if (!request) return { result: await store.transaction(write) };
  const earlier = await store.idempotency.find(accountId, request.key);
  if (earlier) return replay(store, earlier, request, kept);
  try {
    return await store.transaction(async (tx) => {
      const result = await write(tx);
      const response = request.respond(result);
      await tx.idempotency.insert(
        accountId,
        request.key,
        {
          requestHash: request.requestHash,
          status: response.status,
          headers: response.headers,
          body: '',
          answer: kept.reference(result),
          bodyDigest: digestOf(response.body),
        },
        now(),
      );
      const refused = storedResponsesExceeded((await tx.accounts.usage(accountId)).storedResponses, quotas);
      if (refused) throw refused;
      return { result, response };
    });
  } catch (error) {
    // A concurrent request with the same key may have won the race: then its response is ours too.
    const twin = await store.idempotency.find(accountId, request.key).catch(() => undefined);
    if (twin) return replay(store, twin, request, kept);
    throw error;
  }
}
