import type { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.ts';
import type { Caller } from '../domain/visibility.ts';
import { digestOf, sameDigest } from '../registry/keys.ts';
import type { Principal, Store } from '../store/store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}

const unauthenticated = (detail: string) => new DomainError('unauthenticated', detail);
const MAX_ENTRIES = 10_000;

/**
 * Resolves `Authorization: Bearer <key>` to a caller. Lookups are cached for `ttlMs`, so a key revoked
 * elsewhere (another process, the CLI) is refused at the latest `ttlMs` later.
 */
export class KeyRing {
  private readonly cache = new Map<string, { principal: Principal | undefined; until: number }>();

  constructor(
    private readonly store: Store,
    private readonly ttlMs: number,
  ) {}

  async authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    if (!header) throw unauthenticated('Send your API key as "Authorization: Bearer <key>".');
    const match = /^Bearer +([\x21-\x7e]{1,512})$/i.exec(header);
    if (!match?.[1]) throw unauthenticated('The Authorization header must be "Bearer <key>".');
    const digest = digestOf(match[1]);
    const principal = await this.lookup(digest);
    if (!principal || !sameDigest(principal.digest, digest)) throw unauthenticated('The API key is not valid.');
    if (principal.revokedAt !== null) throw unauthenticated('The API key has been revoked.');
    request.caller = { accountId: principal.accountId, role: principal.role, keyId: principal.keyId };
  }

  private async lookup(digest: string): Promise<Principal | undefined> {
    const now = Date.now();
    const hit = this.cache.get(digest);
    if (hit && hit.until > now) return hit.principal;
    const principal = await this.store.findPrincipal(digest);
    if (this.ttlMs > 0) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.delete(digest);
      this.cache.set(digest, { principal, until: now + this.ttlMs });
    }
    return principal;
  }
}
