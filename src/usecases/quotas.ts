import { type Quotas, quotaExceeded, quotasOn, usageAdded } from '../domain/quota.ts';
import type { Transaction } from '../store/store.ts';

// The quotas of a write that adds templates, endpoints or history, judged on what it added by the database's own count.

/**
 * Runs `write` and refuses it (its transaction rolls back) if it took the account past a quota, judged on what it
 * added by the database's own count: the template, its revision, a release and its webhook's payload.
 */
export async function withinQuotas<T>(tx: Transaction, accountId: string, quotas: Quotas, write: () => Promise<T>): Promise<T> {
  if (!quotasOn(quotas)) return write();
  await tx.accounts.lockUsage(accountId);
  const before = await tx.accounts.usage(accountId);
  const result = await write();
  const after = await tx.accounts.usage(accountId);
  const problem = quotaExceeded(after, usageAdded(before, after), quotas);
  if (problem) throw problem;
  return result;
}
