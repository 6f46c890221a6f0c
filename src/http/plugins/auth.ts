import type { FastifyRequest } from 'fastify';
import { forbidden } from '../../domain/errors.ts';
import type { Caller } from '../../domain/visibility.ts';
import type { Podplate } from '../../usecases/podplate.ts';

// Authentication: the caller each request stands for, from its Bearer key; and what a read-only key may not do.

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
  interface FastifyContextConfig {
    /** A route that changes nothing though its method is not GET (a read-only key may call it). */
    changesNothing?: boolean;
  }
}

const BEARER = /^Bearer +([\x21-\x7e]{1,512})$/i;
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The onRequest hook that resolves `Authorization: Bearer <key>` to the request's caller. Every failure counts
 * against the client's address (request.ip, through TRUST_PROXY when set). Each log line of the request from then on
 * names the account and the key's id (never the key).
 */
export const authenticate = (podplate: Podplate) => async (request: FastifyRequest) => {
  const header = request.headers.authorization;
  if (!header) throw await podplate.keys.refused(request.ip, 'Send your API key as "Authorization: Bearer <key>".');
  const secret = BEARER.exec(header)?.[1];
  if (!secret) throw await podplate.keys.refused(request.ip, 'The Authorization header must be "Bearer <key>".');
  const { accountName, ...caller } = await podplate.keys.authenticate(secret, request.ip);
  request.caller = caller;
  request.log = request.log.child({ account: accountName, keyId: caller.keyId });
};

/**
 * The onRequest hook, after authentication, that refuses every write of a read-only key (403) before anything else
 * is read: its body, an Idempotency-Key's kept answer, the route's own rules.
 */
export const refuseWritesOfReadKeys = async (request: FastifyRequest) => {
  if (request.caller.access !== 'read' || READS.has(request.method) || request.routeOptions.config.changesNothing) return;
  throw forbidden('This API key is read-only (access: read): it may read, and make no change.');
};
