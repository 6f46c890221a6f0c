import { DomainError } from './errors.ts';
import type { TemplateContent } from './template.ts';

// Quotas per account: how many templates and bytes of them, how many bytes of their history, how many endpoints,
// registry auths, secrets, API keys and kept responses to Idempotency-Keys. 0 (or absent, for the optional ones) turns one off.
// Together they bound everything an account's requests make the server keep (docs/reliability.md, "Bounds").

export interface Quotas {
  templates: number;
  bytes: number;
  endpoints: number;
  registryAuths: number;
  secrets?: number;
  /** Bytes of revisions, releases and undelivered webhook payloads. */
  historyBytes?: number;
  /** Responses kept for Idempotency-Keys (each kept 24 hours). */
  storedResponses?: number;
  /** API keys: active ones, and those ended (revoked or expired) within KEYS_FORGOTTEN_AFTER_DAYS. */
  apiKeys?: number;
}

/** What an account holds (kept by the database itself, see store migrations 0005, 0012 and 0019). */
export interface AccountUsage {
  templates: number;
  templateBytes: number;
  endpoints: number;
  registryAuths: number;
  historyBytes: number;
  storedResponses: number;
}

export const NO_QUOTAS: Quotas = { templates: 0, bytes: 0, endpoints: 0, registryAuths: 0 };

const SETTING = {
  templates: 'QUOTA_TEMPLATES_PER_ACCOUNT',
  bytes: 'QUOTA_BYTES_PER_ACCOUNT',
  endpoints: 'QUOTA_ENDPOINTS_PER_ACCOUNT',
  registryAuths: 'QUOTA_REGISTRY_AUTHS_PER_ACCOUNT',
  secrets: 'QUOTA_SECRETS_PER_ACCOUNT',
  historyBytes: 'QUOTA_HISTORY_BYTES_PER_ACCOUNT',
  storedResponses: 'QUOTA_IDEMPOTENCY_KEYS_PER_ACCOUNT',
  apiKeys: 'QUOTA_API_KEYS_PER_ACCOUNT',
} as const;
type Quota = keyof typeof SETTING;

/** A write refused because it would take an account past one of its quotas: names the quota, its limit and the use. */
export class QuotaExceeded extends DomainError {
  readonly quota: { name: (typeof SETTING)[Quota]; limit: number; used: number };

  constructor(quota: { name: (typeof SETTING)[Quota]; limit: number; used: number }, detail: string) {
    super('quota-exceeded', detail);
    this.quota = quota;
  }
}

const n = (value: number) => value.toLocaleString('en');
const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * A template's bytes, as its quota counts them: its text as stored (env, ports and commands as JSON text), plus 512
 * for the rest of its representation. Within a few hundred bytes of its JSON. The database counts the same with a
 * trigger (store migration 0005); a test holds the two equal.
 */
export function templateBytes(t: TemplateContent): number {
  return (
    utf8(t.name) +
    utf8(t.imageName) +
    utf8(t.volumeMountPath) +
    utf8(t.containerRegistryAuthId) +
    utf8(JSON.stringify(t.dockerEntrypoint)) +
    utf8(JSON.stringify(t.dockerStartCmd)) +
    utf8(JSON.stringify(t.env)) +
    utf8(JSON.stringify(t.ports)) +
    utf8(t.readme) +
    512
  );
}

/**
 * The quota a write takes the account past, judged on its use after the write: `added` is what the write added
 * (a write that adds nothing, or frees some, is never refused, so an account over a lowered quota can shrink).
 */
export function quotaExceeded(after: AccountUsage, added: Partial<AccountUsage>, quotas: Quotas): QuotaExceeded | undefined {
  const templates = added.templates ?? 0;
  if (quotas.templates > 0 && templates > 0 && after.templates > quotas.templates) {
    const used = after.templates - templates;
    return new QuotaExceeded(
      { name: SETTING.templates, limit: quotas.templates, used },
      `This account has ${n(used)} templates; an account may have at most ${n(quotas.templates)}. Delete some to make room.`,
    );
  }
  const bytes = added.templateBytes ?? 0;
  if (quotas.bytes > 0 && bytes > 0 && after.templateBytes > quotas.bytes) {
    const used = after.templateBytes - bytes;
    return new QuotaExceeded(
      { name: SETTING.bytes, limit: quotas.bytes, used },
      `This account's templates take ${n(used)} bytes and this would add ${n(bytes)}; an account may hold at most ` +
        `${n(quotas.bytes)}. Make templates smaller or delete some.`,
    );
  }
  const endpoints = added.endpoints ?? 0;
  if (quotas.endpoints > 0 && endpoints > 0 && after.endpoints > quotas.endpoints) {
    const used = after.endpoints - endpoints;
    return new QuotaExceeded(
      { name: SETTING.endpoints, limit: quotas.endpoints, used },
      `This account has ${n(used)} endpoints; an account may have at most ${n(quotas.endpoints)}. Delete one to make room.`,
    );
  }
  const history = added.historyBytes ?? 0;
  const historyLimit = quotas.historyBytes ?? 0;
  if (historyLimit > 0 && history > 0 && after.historyBytes > historyLimit) {
    const used = after.historyBytes - history;
    return new QuotaExceeded(
      { name: SETTING.historyBytes, limit: historyLimit, used },
      `This account's history (revisions, releases and webhooks not yet delivered) takes ${n(used)} bytes and this ` +
        `would add ${n(history)}; an account may keep at most ${n(historyLimit)}. Delete templates you no longer need ` +
        '(their history goes with them), or change large templates less often.',
    );
  }
  const registryAuths = added.registryAuths ?? 0;
  if (quotas.registryAuths > 0 && registryAuths > 0 && after.registryAuths > quotas.registryAuths) {
    const used = after.registryAuths - registryAuths;
    return new QuotaExceeded(
      { name: SETTING.registryAuths, limit: quotas.registryAuths, used },
      `This account has ${n(used)} registry auths; an account may have at most ${n(quotas.registryAuths)}. Delete one to make room.`,
    );
  }
  return undefined;
}

/** What a write added to an account's holdings: its use after, less its use before. */
export function usageAdded(before: AccountUsage, after: AccountUsage): AccountUsage {
  return {
    templates: after.templates - before.templates,
    templateBytes: after.templateBytes - before.templateBytes,
    endpoints: after.endpoints - before.endpoints,
    registryAuths: after.registryAuths - before.registryAuths,
    historyBytes: after.historyBytes - before.historyBytes,
    storedResponses: after.storedResponses - before.storedResponses,
  };
}

/** Whether any quota that a template or endpoint write can pass is on: only then is the use read. */
export const quotasOn = (quotas: Quotas): boolean =>
  quotas.templates > 0 || quotas.bytes > 0 || quotas.endpoints > 0 || (quotas.historyBytes ?? 0) > 0;

/** A new kept response refused when the account has `used` already (after the write, the one it adds included). */
export function storedResponsesExceeded(usedAfter: number, quotas: Quotas): QuotaExceeded | undefined {
  const limit = quotas.storedResponses ?? 0;
  if (limit === 0 || usedAfter <= limit) return undefined;
  return new QuotaExceeded(
    { name: SETTING.storedResponses, limit, used: usedAfter - 1 },
    `This account has ${n(usedAfter - 1)} responses kept for Idempotency-Keys of the last 24 hours; an account may have at ` +
      `most ${n(limit)}. Retry without an Idempotency-Key, or once older keys have expired.`,
  );
}

/** A new secret refused when the account has `used` already and may have at most `quotas.secrets`. */
export function secretsQuotaExceeded(used: number, quotas: Quotas): QuotaExceeded | undefined {
  const limit = quotas.secrets ?? 0;
  if (limit === 0 || used < limit) return undefined;
  return new QuotaExceeded(
    { name: SETTING.secrets, limit, used },
    `This account has ${n(used)} secrets; an account may have at most ${n(limit)}. Delete one to make room.`,
  );
}

/**
 * Days after which a revoked or expired key no longer counts against the quota, and is forgotten (its row deleted by
 * housekeeping) unless a revision names it.
 */
export const KEYS_FORGOTTEN_AFTER_DAYS = 30;

/** A new API key refused when the account holds `used` keys already (revoked and expired ones not yet forgotten). */
export function apiKeysQuotaExceeded(used: number, quotas: Quotas): QuotaExceeded | undefined {
  const limit = quotas.apiKeys ?? 0;
  if (limit === 0 || used < limit) return undefined;
  return new QuotaExceeded(
    { name: SETTING.apiKeys, limit, used },
    `This account has ${n(used)} API keys (revoked and expired ones count for ${KEYS_FORGOTTEN_AFTER_DAYS} days after); ` +
      `an account may have at most ${n(limit)}. Reuse a key you have, or ask an ` +
      'operator to raise the quota.',
  );
}
