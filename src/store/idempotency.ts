import type { StoredResponse } from '../domain/idempotency.ts';
import type { Core } from './core.ts';

// Responses kept for Idempotency-Keys, per account.

export class IdempotencyRepository {
  constructor(private readonly core: Core) {}

  async find(accountId: string, key: string): Promise<StoredResponse | undefined> {
    const row = await this.core.db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'status', 'headers', 'body'])
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
    return row && { requestHash: row.request_hash, status: row.status, headers: JSON.parse(row.headers), body: row.body };
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
        created_at: at,
      })
      .execute();
  }

  /** Forgets responses stored before `at`; how many. */
  async forgetBefore(at: string): Promise<number> {
    const result = await this.core.db.deleteFrom('idempotency_keys').where('created_at', '<', at).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
