import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshDatabase } from './support/harness.ts';
import { startServer } from './support/process.ts';

test('first start creates and prints a platform key once; JSON logs with request ids; SIGTERM exits 0', async () => {
  const db = await freshDatabase('sqlite');
  try {
    const first = await startServer({ DATABASE_URL: db.url });
    const key = /pp_[A-Za-z0-9_-]{43}/.exec(first.stderr())?.[0];
    assert.ok(key, first.stderr());
    const create = await fetch(`${first.url}/v1/templates`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'req-abc' },
      body: JSON.stringify({ name: 'official', imageName: 'ubuntu' }),
    });
    assert.equal(create.status, 200);
    assert.equal((await create.json()).isPlatform, true);
    assert.equal(await first.stop('SIGTERM'), 0);

    const lines = first
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(
      lines.some((l) => l.reqId === 'req-abc' && l.res?.statusCode === 200),
      'the request is logged with its id',
    );
    assert.equal(first.stdout().includes(key), false, 'no key in the logs');

    const second = await startServer({ DATABASE_URL: db.url });
    assert.equal(/pp_[A-Za-z0-9_-]{43}/.test(second.stderr()), false, 'printed once only');
    assert.equal(await second.stop('SIGINT'), 0);
  } finally {
    await db.drop();
  }
});

test('an idle connection is kept only as long as the Keep-Alive header says, which is less than the server waits', async () => {
  const db = await freshDatabase('sqlite');
  try {
    const server = await startServer({ DATABASE_URL: db.url, REQUEST_TIMEOUT_MS: '4000' });
    try {
      const response = await fetch(`${server.url}/healthz`);
      await response.arrayBuffer();
      const timeout = Number(/timeout=(\d+)/.exec(response.headers.get('keep-alive') ?? '')?.[1]);
      assert.ok(timeout >= 1 && timeout * 1000 < 4000, `keep-alive: ${response.headers.get('keep-alive')}`);
    } finally {
      await server.stop();
    }
  } finally {
    await db.drop();
  }
});
