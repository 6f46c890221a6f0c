import { sql } from 'kysely';
import type { Core } from './core.ts';

// Responses kept for Idempotency-Keys, per account, and for how long.

/** How long a response to an Idempotency-Key is kept for retries. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The response to a request made with an Idempotency-Key, kept to answer its retries byte for byte. */
export interface StoredResponse {
  /** Identifies the request (method, route, parameters, body): the same key with another request is refused. */
  requestHash: string;
  status: number;
  headers: Record<string, string>;
  /** The whole body for rows kept before migration 0019; '' when `answer` names what it was. */
  body: string;
  /** A reference to what the write answered with, from which the body is made again; null for older rows. */
  answer: string | null;
  /** The body's SHA-256 (base64url): a body made again must be this one. */
  bodyDigest: string | null;
}

/** What the root store may do with stored responses: read. Writes are a transaction's (store.ts). */
export type IdempotencyReads = Pick<IdempotencyRepository, 'find'>;

export class IdempotencyRepository {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  async find(accountId: string, key: string): Promise<StoredResponse | undefined> {
    const row = await this.core.db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'status', 'headers', 'body', 'answer', 'body_digest'])
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
    return (
      row && {
        requestHash: row.request_hash,
        status: row.status,
        headers: JSON.parse(row.headers),
        body: row.body,
        answer: row.answer,
        bodyDigest: row.body_digest,
      }
    );
  }

  async insert(accountId: string, key: string, response: StoredResponse, at: string): Promise<void> {
    await this.core.db
      .insertInto('idempotency_keys')
      .values({
        account_id: accountId,
        key,
        request_hash: response.requestHash,
        status: response.status,
        headers: JSON.stringify(response.headers),
        body: response.body,
        answer: response.answer,
        body_digest: response.bodyDigest,
        created_at: at,
      })
      .execute();
  }

  /** Forgets up to `limit` of the responses stored before `at`, oldest first (down their index); how many. */
  async forgetBefore(at: string, limit: number): Promise<number> {
    const result = await sql`delete from idempotency_keys where (account_id, key) in (
      select account_id, key from idempotency_keys where created_at < ${at} order by created_at limit ${limit})`.execute(this.core.db);
    return Number(result.numAffectedRows ?? 0n);
  }
}
