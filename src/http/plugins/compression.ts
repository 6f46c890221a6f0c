import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

// Response compression: br or gzip, as the request's Accept-Encoding prefers, for answers large enough to gain.

/**
 * Answers smaller than this go as they are: under a kilobyte, an answer and its headers fit one TCP segment either way,
 * and compressing it would cost CPU to save nothing a client waits for (a template of the usual size is about 700 bytes).
 */
export const COMPRESS_MIN_BYTES = 1024;
/**
 * Answers up to this size are compressed in one synchronous call; larger ones, and streamed pages, through a stream
 * on libuv's threadpool. A page of 100 templates (about 60 KB) costs gzip about 0.5 ms of CPU in one call and three
 * times that as a stream (a compressor's state set up per answer, and the hops between threads); blocking the event
 * loop for the 1 ms a 128 KiB answer takes is less than serving it costs.
 */
export const COMPRESS_SYNC_MAX_BYTES = 128 * 1024;

/**
 * Compresses every answer of a compressible type (JSON, problems, text, the UI's files) of COMPRESS_MIN_BYTES or more,
 * streamed list pages included (piped through the compressor as they are written), with `Vary: Accept-Encoding`.
 * brotli at quality 4 (the library's default, chosen for on-the-fly use) is preferred at equal weight: on our JSON it
 * is about as fast as gzip and smaller. Request bodies are never decompressed: a body is read as sent.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: COMPRESS_MIN_BYTES,
    syncThreshold: COMPRESS_SYNC_MAX_BYTES,
  });
}
