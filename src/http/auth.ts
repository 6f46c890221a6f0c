import type { FastifyRequest } from 'fastify';
import type { Caller } from '../domain/visibility.ts';
import type { Registry } from '../registry/registry.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}

const BEARER = /^Bearer +([\x21-\x7e]{1,512})$/i;

/**
 * The onRequest hook that resolves `Authorization: Bearer <key>` to the request's caller. Every failure counts
 * against the client's address (request.ip, through TRUST_PROXY when set).
 */
export const authenticate = (registry: Registry) => async (request: FastifyRequest) => {
  const header = request.headers.authorization;
  if (!header) throw await registry.keys.refused(request.ip, 'Send your API key as "Authorization: Bearer <key>".');
  const secret = BEARER.exec(header)?.[1];
  if (!secret) throw await registry.keys.refused(request.ip, 'The Authorization header must be "Bearer <key>".');
  request.caller = await registry.keys.authenticate(secret, request.ip);
};
