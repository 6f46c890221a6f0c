import { test } from 'node:test';
import { startHarness } from './test/support/harness.ts';
test('junk', async () => {
  const h = await startHarness('sqlite');
  const key = await h.key('j');
  const body = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i.toString(36)}":1`).join(',')}}`;
  console.log('bytes', Buffer.byteLength(body));
  for (let i = 0; i < 5; i++) {
    const t = process.hrtime.bigint();
    const r = await h.call('POST', '/v1/templates', { key, body });
    console.log(r.status, Number(process.hrtime.bigint() - t) / 1e6, 'ms', r.body?.errors?.length);
  }
  await h.close();
});
