import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { test } from 'node:test';
import { AddressRefused, addressProblem, guardedLookup, PerKeyLimit, Reacher } from '../../src/images/guard.ts';
import { parseChallenge } from '../../src/images/registry.ts';

// What an image check may reach: the address rules, the socket lookup that applies them, the hosts an operator lists,
// and the bound on checks at once per registry. (Through the API, against real registries: checks.test.ts.)

test('only public addresses may be reached: loopback, private, link-local, metadata, CGNAT and the like are refused', () => {
  for (const address of ['8.8.8.8', '2606:4700::1111']) assert.equal(addressProblem(address), undefined, address);
  const refused: [string, RegExp][] = [
    ['127.0.0.1', /loopback/],
    ['::1', /loopback/],
    ['10.1.2.3', /private/],
    ['172.16.0.1', /private/],
    ['192.168.1.1', /private/],
    ['fd00:ec2::254', /private/],
    ['::ffff:10.0.0.1', /private/],
    ['169.254.169.254', /link-local/],
    ['fe80::1', /link-local/],
    ['100.64.0.1', /carrier-grade/],
    ['0.0.0.0', /unspecified/],
    ['192.0.2.1', /reserved/],
  ];
  for (const [address, said] of refused) assert.match(addressProblem(address) ?? '', said, address);
});

const resolver =
  (addresses: Record<string, LookupAddress[]>) =>
  (hostname: string, _options: unknown, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) =>
    callback(null, addresses[hostname] ?? []);

const lookUp = (lookup: ReturnType<typeof guardedLookup>, hostname: string, all: boolean) =>
  new Promise<{ error: Error | null; address: unknown }>((resolve) =>
    lookup(hostname, { all }, (error, address) => resolve({ error, address })),
  );

test('the socket lookup refuses a name with any address not public, whole; passes a public one on', async () => {
  const lookup = guardedLookup(
    resolver({
      'public.test': [{ address: '8.8.4.4', family: 4 }],
      'mixed.test': [
        { address: '8.8.4.4', family: 4 },
        { address: '10.0.0.9', family: 4 },
      ],
      'metadata.test': [{ address: '169.254.169.254', family: 4 }],
    }),
  );
  assert.deepEqual(await lookUp(lookup, 'public.test', true), { error: null, address: [{ address: '8.8.4.4', family: 4 }] });
  assert.deepEqual(await lookUp(lookup, 'public.test', false), { error: null, address: '8.8.4.4' });
  const mixed = await lookUp(lookup, 'mixed.test', true);
  assert.ok(mixed.error instanceof AddressRefused);
  assert.match(mixed.error.message, /mixed\.test resolves to a private address \(10\.0\.0\.9\)/);
  assert.match((await lookUp(lookup, 'metadata.test', false)).error?.message ?? '', /link-local/);
});

test('a listed host is reached over http at any address; any other over https only, an address literal checked first', () => {
  const reacher = new Reacher({ insecure: new Set(['127.0.0.1:5000', 'registry.lan']), connectTimeoutMs: 1000 });
  try {
    assert.equal(reacher.scheme('127.0.0.1:5000'), 'http:');
    assert.equal(reacher.scheme('127.0.0.1:5001'), 'https:', 'a listed host is listed with its port');
    assert.equal(reacher.scheme('registry.lan'), 'http:');
    assert.ok('dispatcher' in reacher.reach(new URL('http://127.0.0.1:5000/v2/')));
    assert.ok('dispatcher' in reacher.reach(new URL('https://ghcr.io/v2/')));
    const plain = reacher.reach(new URL('http://ghcr.io/v2/'));
    assert.match('refused' in plain ? plain.refused : '', /only https is allowed/);
    const literal = reacher.reach(new URL('https://10.9.8.7:443/v2/'));
    assert.match('refused' in literal ? literal.refused : '', /10\.9\.8\.7 is a private address/);
    const v6 = reacher.reach(new URL('https://[::1]:5000/v2/'));
    assert.match('refused' in v6 ? v6.refused : '', /loopback/);
  } finally {
    void reacher.close();
  }
});

test('at most N checks at once per registry; the others wait their turn, and other registries do not', async () => {
  const limit = new PerKeyLimit(2);
  let running = 0;
  let most = 0;
  const releases: (() => void)[] = [];
  const work = () =>
    limit.run('ghcr.io', async () => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
    });
  const all = [work(), work(), work(), work()];
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(running, 2);
  let other = false;
  await limit.run('docker.io', async () => {
    other = true;
  });
  assert.ok(other, 'another registry is not held up');
  while (releases.length > 0 || running > 0) {
    releases.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(all);
  assert.equal(most, 2);
});

test('WWW-Authenticate challenges are read as RFC 9110 says: scheme, quoted and bare parameters', () => {
  assert.deepEqual(
    parseChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"'),
    {
      scheme: 'bearer',
      params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/busybox:pull' },
    },
  );
  assert.deepEqual(parseChallenge('Basic realm="Registry Realm", charset=UTF-8'), {
    scheme: 'basic',
    params: { realm: 'Registry Realm', charset: 'UTF-8' },
  });
  assert.deepEqual(parseChallenge('Bearer realm="a\\"b"'), { scheme: 'bearer', params: { realm: 'a"b' } });
});
