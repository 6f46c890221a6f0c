import type { FastifyRequest } from 'fastify';
import { RateLimited } from '../../domain/errors.ts';
import type { Podplate } from '../../usecases/podplate.ts';

// The per-key rate limit of every request, by what it costs: a token for the request, and its body's bytes.

/** A request's body costs a token for each this many bytes, from a bucket of its own. */
export const BODY_BYTES_PER_TOKEN = 16 * 1024;
/** A body whose length is not declared (chunked) is counted as the largest a body may be. */
const UNDECLARED_BODY_BYTES = 1024 * 1024;
/** The bodies' bucket holds this much of a minute's refill: a burst of bodies is ten seconds' worth. */
const BODY_BURST_FRACTION = 1 / 6;

/** The tokens a request's body takes: one for each BODY_BYTES_PER_TOKEN it declares. */
export function bodyCost(request: Pick<FastifyRequest, 'headers'>): number {
  const declared = request.headers['content-length'];
  const chunked = declared === undefined && request.headers['transfer-encoding'] !== undefined;
  const bytes = chunked ? UNDECLARED_BODY_BYTES : Number(declared ?? 0) || 0;
  return Math.floor(bytes / BODY_BYTES_PER_TOKEN);
}

/**
 * The onRequest hook, after authentication: each API key may make `perMinute` requests a minute (a burst of as many),
 * and send bodies of `perMinute` × 16 KiB a minute (a burst of a sixth of that), each counted across every process
 * of the install; beyond either, 429 with Retry-After. Every key has its own buckets, so one busy key slows no other,
 * and a key that sends large bodies can't take the server's time from others while within its count of requests
 * (docs/reliability.md, "Fairness").
 */
export const rateLimit = (podplate: Podplate, perMinute: number) => async (request: FastifyRequest) => {
  const key = request.caller.keyId;
  let waitMs = await podplate.limits.take(`key ${key}`, perMinute);
  const body = bodyCost(request);
  if (waitMs === 0 && body > 0) {
    waitMs = await podplate.limits.take(`bodies ${key}`, perMinute, body, Math.max(1, Math.floor(perMinute * BODY_BURST_FRACTION)));
  }
  if (waitMs > 0) {
    throw new RateLimited(
      `This API key made more than ${perMinute} requests, or sent more than ${perMinute} × 16 KiB of bodies, in a minute; ` +
        'retry after the time in Retry-After.',
      Math.ceil(waitMs / 1000),
    );
  }
};
