import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../domain/visibility.ts';
import type { Podplate } from '../../usecases/podplate.ts';

// Authentication: the caller each request stands for, from its Bearer key.

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
export const authenticate = (podplate: Podplate) => async (request: FastifyRequest) => {
  const header = request.headers.authorization;
  if (!header) throw await podplate.keys.refused(request.ip, 'Send your API key as "Authorization: Bearer <key>".');
  const secret = BEARER.exec(header)?.[1];
  if (!secret) throw await podplate.keys.refused(request.ip, 'The Authorization header must be "Bearer <key>".');
  request.caller = await podplate.keys.authenticate(secret, request.ip);
};
