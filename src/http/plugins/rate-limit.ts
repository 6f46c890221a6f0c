import type { FastifyRequest } from 'fastify';
import { RateLimited } from '../../domain/errors.ts';
import type { Podplate } from '../../usecases/podplate.ts';

// The per-key rate limit of every request.

/**
 * The onRequest hook, after authentication: each API key may make `perMinute` requests a minute (a burst of as
 * many), counted across every process of the install; beyond it, 429 with Retry-After. Every key has its own bucket,
 * so one busy key slows no other.
 */
export const rateLimit = (podplate: Podplate, perMinute: number) => async (request: FastifyRequest) => {
  const waitMs = await podplate.limits.take(`key ${request.caller.keyId}`, perMinute);
  if (waitMs > 0) {
    throw new RateLimited(
      `This API key made more than ${perMinute} requests in a minute; retry after the time in Retry-After.`,
      Math.ceil(waitMs / 1000),
    );
  }
};
