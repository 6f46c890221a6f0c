import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { requestLogger } from '../../src/http/plugins/log.ts';

// A request's logger binds its request id, then its account and key id, and writes them with each line, as pino's
// child would; it only does the work when a line is written.

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: pino({ level, base: undefined, timestamp: false }, sink) };
}

test("a request's lines carry its bindings, whatever the call's form; a child adds to them", () => {
  const { lines, logger } = capture('info');
  const log = requestLogger(logger, { reqId: 'r1' }, {}).child({ account: 'alice', keyId: 'key_1' });
  log.info({ status: 200 }, 'request');
  log.warn('plain %s', 'text');
  log.error(new Error('boom'), 'failed');
  log.debug({ hidden: true }, 'below the level');
  assert.equal(lines.length, 3);
  assert.deepEqual(lines[0], { level: 30, reqId: 'r1', account: 'alice', keyId: 'key_1', status: 200, msg: 'request' });
  assert.deepEqual(lines[1], { level: 40, reqId: 'r1', account: 'alice', keyId: 'key_1', msg: 'plain text' });
  assert.equal(lines[2]?.msg, 'failed');
  assert.equal(lines[2]?.reqId, 'r1');
  assert.equal((lines[2]?.err as { message: string } | undefined)?.message, 'boom');
});

test('a route with a level of its own gets a pino child; the level is read from the process logger as it changes', () => {
  const { lines, logger } = capture('warn');
  const log = requestLogger(logger, { reqId: 'r2' }, {});
  log.info('dropped');
  logger.level = 'info';
  log.info('kept');
  assert.deepEqual(
    lines.map((l) => l.msg),
    ['kept'],
  );
  const own = requestLogger(logger, { reqId: 'r3' }, { level: 'error' });
  assert.equal(own.level, 'error');
});
