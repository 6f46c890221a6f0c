import type { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.ts';
import type { Caller } from '../domain/visibility.ts';
import type { Registry } from '../registry/registry.ts';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
  }
}

const unauthenticated = (detail: string) => new DomainError('unauthenticated', detail);

/** The onRequest hook that resolves `Authorization: Bearer <key>` to the request's caller. */
export const authenticate = (registry: Registry) => async (request: FastifyRequest) => {
  const header = request.headers.authorization;
  if (!header) throw unauthenticated('Send your API key as "Authorization: Bearer <key>".');
  const match = /^Bearer +([\x21-\x7e]{1,512})$/i.exec(header);
  if (!match?.[1]) throw unauthenticated('The Authorization header must be "Bearer <key>".');
  request.caller = await registry.keys.authenticate(match[1]);
};
