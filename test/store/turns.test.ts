import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RateLimited } from '../../src/domain/errors.ts';
import { Turns, WAITING } from '../../src/store/templates/turns.ts';

// SQLite's list pages take turns on the event loop, the accounts in turn (src/store/templates/turns.ts).

test("one account's crowd of pages does not hold another's behind all of them: the accounts take turns", async () => {
  const turns = new Turns();
  const order: string[] = [];
  const page = (who: string) => async () => {
    order.push(who);
  };
  const all = [
    ...Array.from({ length: 10 }, (_, i) => turns.take('crowd', page(`crowd ${i}`))),
    turns.take('other', page('other 0')),
    turns.take('third', page('third 0')),
    turns.take('other', page('other 1')),
  ];
  await Promise.all(all);
  // The crowd's second page was in line before the others came; from then on, the accounts alternate.
  assert.deepEqual(order.slice(0, 7), ['crowd 0', 'crowd 1', 'other 0', 'third 0', 'crowd 2', 'other 1', 'crowd 3']);
  assert.equal(order.length, 13);
});

test('one page at a time, each after the event loop served what came meanwhile', async () => {
  const turns = new Turns();
  let running = 0;
  let most = 0;
  let served = 0;
  const page = async () => {
    running++;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, 1));
    running--;
  };
  const timer = setInterval(() => served++, 0);
  await Promise.all(Array.from({ length: 20 }, (_, i) => turns.take(`a${i % 3}`, page)));
  clearInterval(timer);
  assert.equal(most, 1);
  assert.ok(served > 0);
});

test('a page that fails ends its turn; an account with too many waiting gets a 429', async () => {
  const turns = new Turns();
  await assert.rejects(
    turns.take('a', async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(await turns.take('a', async () => 'next'), 'next');
  let release: () => void = () => {};
  let started: () => void = () => {};
  const reading = new Promise<void>((resolve) => (started = resolve));
  const held = turns.take(
    'b',
    () =>
      new Promise<void>((resolve) => {
        release = resolve;
        started();
      }),
  );
  await reading;
  const waiting = Array.from({ length: WAITING }, () => turns.take('a', async () => 'ok'));
  await assert.rejects(
    turns.take('a', async () => 'one too many'),
    RateLimited,
  );
  // Another account still waits for its turn, and has it.
  const other = turns.take('c', async () => 'c had its turn');
  release();
  await held;
  assert.equal(await other, 'c had its turn');
  assert.deepEqual(await Promise.all(waiting), Array(WAITING).fill('ok'));
});
