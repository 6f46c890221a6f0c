import type { FastifyRequest } from 'fastify';
import { RateLimited } from '../../domain/errors.ts';
import type { Podplate } from '../../usecases/podplate.ts';

// The per-key rate limit of every request, by what it costs: a token, and one more for each 16 KiB of its body.

/** A request's body costs a token for each this many bytes, beside the request's own token. */
export const BODY_BYTES_PER_TOKEN = 16 * 1024;
/** A body whose length is not declared (chunked) is counted as the largest a body may be. */
const UNDECLARED_BODY_BYTES = 1024 * 1024;

/** The tokens a request takes: one, and one for each BODY_BYTES_PER_TOKEN of the body it declares. */
export function requestCost(request: Pick<FastifyRequest, 'headers' | 'method'>): number {
  const declared = request.headers['content-length'];
  const chunked = declared === undefined && request.headers['transfer-encoding'] !== undefined;
  const bytes = chunked ? UNDECLARED_BODY_BYTES : Number(declared ?? 0) || 0;
  return 1 + Math.floor(bytes / BODY_BYTES_PER_TOKEN);
}

/**
 * The onRequest hook, after authentication: each API key may spend `perMinute` tokens a minute (a burst of as many),
 * counted across every process of the install; beyond it, 429 with Retry-After. Every key has its own bucket, so
 * one busy key slows no other, and large bodies cost by their size, so a key that sends them can't take the
 * server's time from others while within its count of requests (docs/reliability.md, "Fairness").
 */
export const rateLimit = (podplate: Podplate, perMinute: number) => async (request: FastifyRequest) => {
  const waitMs = await podplate.limits.take(`key ${request.caller.keyId}`, perMinute, requestCost(request));
  if (waitMs > 0) {
    throw new RateLimited(
      `This API key spent more than its ${perMinute} tokens a minute (a request is one, and one more per 16 KiB of its body); ` +
        'retry after the time in Retry-After.',
      Math.ceil(waitMs / 1000),
    );
  }
};
