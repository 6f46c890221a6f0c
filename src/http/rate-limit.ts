import type { FastifyReply, FastifyRequest } from 'fastify';
import { problem, sendProblem } from './problem.ts';

const MAX_KEYS = 100_000;

/**
 * A token bucket per API key, in this process: up to `perMinute` requests in a burst, refilled at `perMinute`
 * a minute. Beyond it, 429 with Retry-After. Every key has its own bucket, so one busy key slows no other.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;

  constructor(private readonly perMinute: number) {
    this.perMs = perMinute / 60_000;
  }

  /** Takes a token for `key`; the milliseconds to wait for the next one when there is none. */
  take(key: string, now = Date.now()): number {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= MAX_KEYS) this.buckets.delete(this.buckets.keys().next().value as string);
      bucket = { tokens: this.perMinute, at: now };
      this.buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.perMs);
  }

  /** The onRequest hook, after authentication. */
  check = async (request: FastifyRequest, reply: FastifyReply) => {
    const waitMs = this.take(request.caller.keyId);
    if (waitMs > 0) {
      reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
      return sendProblem(
        reply,
        problem('rate-limited', `This API key made more than ${this.perMinute} requests in a minute; retry after the time in Retry-After.`),
      );
    }
  };
}
