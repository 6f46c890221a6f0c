import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { eventually } from '../support/eventually.ts';
import { forEachDialect, type Harness, startHarness, templateBody } from '../support/harness.ts';
import { image, index, PASSWORD, startRegistry, type TestRegistry, USERNAME } from '../support/registry.ts';

// Image checks against real registries (Debian's docker-registry on loopback: open, htpasswd Basic auth, token auth
// with a token server of our own), through the HTTP API on both databases: verified images with their digest,
// platforms, size and CUDA version; each failure with its reason; an unreachable registry retried while the write
// that asked answered at once; hosts the rules refuse.

const GiB = 1024 ** 3;
let open: TestRegistry;
let basic: TestRegistry;
let token: TestRegistry;
/** A registry that accepts connections and never answers. */
let silent: Server;
let silentHost: string;
const silentSockets: Socket[] = [];
const digests: Record<string, string> = {};
const cudaImage = image({ env: ['PATH=/usr/bin', 'CUDA_VERSION=12.4.1'] });
const layerSize = (built: ReturnType<typeof image>) => JSON.parse(built.manifest.bytes.toString()).layers[0].size as number;

before(async () => {
  [open, basic, token] = await Promise.all([startRegistry('none'), startRegistry('basic'), startRegistry('token')]);
  digests.cuda = await open.push('cuda/app', 'v1', cudaImage);
  digests.multi = await open.push(
    'multi',
    'v1',
    index([{ platform: 'linux/amd64', labels: { 'com.nvidia.cuda.version': '11.8.0' } }, { platform: 'linux/arm64' }]),
  );
  digests.arm = await open.push('arm/only', 'v1', image({ platform: 'linux/arm64' }));
  digests.large = await open.push('large', 'v1', image({ declaredLayerSize: 25 * GiB }));
  digests.basic = await basic.push('private/app', 'v1', image({ marker: 'basic' }));
  digests.token = await token.push('private/app', 'v1', image({ marker: 'token' }));
  silent = createServer((socket) => {
    silentSockets.push(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentHost = `127.0.0.1:${(silent.address() as { port: number }).port}`;
});

after(async () => {
  for (const socket of silentSockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await Promise.all([open.stop(), basic.stop(), token.stop()]);
});

forEachDialect('image checks at real registries', (dialect) => {
  let h: Harness;
  let alice: string;
  let platform: string;

  before(async () => {
    h = await startHarness(dialect, {
      imageChecks: {
        enabled: true,
        insecureRegistries: [...open.hosts, ...basic.hosts, ...token.hosts, silentHost],
        requestTimeoutMs: 1500,
        retryBaseMs: 300,
        retryMaxMs: 600,
        pollMs: 20,
        perAccountPerMinute: 0,
        // Tests resolve one name of their own to a private address; every other name as the system does.
        resolve: (hostname, options, callback) => {
          if (hostname === 'registry.internal.test') return callback(null, [{ address: '10.20.30.40', family: 4 }]);
          import('node:dns').then((dns) => dns.lookup(hostname, options, callback));
        },
      },
    });
    h.podplate.imageChecks.start();
    alice = await h.key('alice');
    platform = await h.key('ops', 'platform');
  });
  after(() => h.close());

  const create = async (imageName: string, overrides: Record<string, unknown> = {}, key = alice) => {
    const r = await h.call('POST', '/v1/templates', { key, body: templateBody({ imageName, ...overrides }) });
    assert.equal(r.status, 200, r.text);
    return r.body;
  };
  /** The template once its check has ended (any status but pending). */
  const checked = async (id: string, key = alice) => {
    let last: any;
    await eventually(`the image check of ${id}`, 20_000, async () => {
      last = (await h.call('GET', `/v1/templates/${id}`, { key })).body;
      return { ok: last.imageCheck.status !== 'pending', seen: last.imageCheck };
    });
    return last;
  };
  const auth = async (password: string) => {
    const r = await h.call('POST', '/v1/containerregistryauth', {
      key: alice,
      body: { name: `auth ${Math.random()}`, username: USERNAME, password },
    });
    assert.equal(r.status, 200, r.text);
    return r.body as { id: string; name: string };
  };
  const resolve = async (id: string) =>
    (await h.call('POST', `/v1/templates/${id}/resolve`, { key: platform, body: { account: 'alice' } })).body;

  test('an image with CUDA_VERSION is verified with its digest, platform, compressed size and CUDA version; the revision is pinned', async () => {
    const t = await create(`${open.host}/cuda/app:v1`);
    assert.equal(t.imageCheck.status, 'pending');
    const done = await checked(t.id);
    assert.deepEqual(
      { ...done.imageCheck, checkedAt: undefined },
      {
        status: 'verified',
        checkedAt: undefined,
        digest: digests.cuda,
        platforms: ['linux/amd64'],
        sizeBytes: layerSize(cudaImage),
        cudaVersion: '12.4.1',
        reason: null,
      },
    );
    assert.ok(Math.abs(Date.parse(done.imageCheck.checkedAt) - Date.now()) < 60_000);
    assert.equal(done.revision, 1, 'a check makes no revision');
    const listed = (await h.call('GET', `/v1/templates?q=${encodeURIComponent('cuda/app')}`, { key: alice })).body;
    assert.deepEqual(listed.find((x: { id: string }) => x.id === t.id).imageCheck, done.imageCheck);
    const [revision] = (await h.call('GET', `/v1/templates/${t.id}/revisions`, { key: alice })).body;
    assert.equal(revision.imageDigest, digests.cuda);
    assert.equal((await resolve(t.id)).imageDigest, digests.cuda);
  });

  test('a multi-platform index: its platforms, its digest, the linux/amd64 image its size and CUDA label', async () => {
    const done = await checked((await create(`${open.host}/multi:v1`)).id);
    assert.equal(done.imageCheck.status, 'verified');
    assert.equal(done.imageCheck.digest, digests.multi);
    assert.deepEqual(done.imageCheck.platforms, ['linux/amd64', 'linux/arm64']);
    assert.equal(done.imageCheck.cudaVersion, '11.8.0');
    assert.ok(done.imageCheck.sizeBytes > 0);
  });

  test('a missing tag, an arm64-only image and an image larger than the disk fail, each with its reason', async () => {
    const missing = await checked((await create(`${open.host}/cuda/app:nope`)).id);
    assert.equal(missing.imageCheck.status, 'failed');
    assert.match(missing.imageCheck.reason, /has no image .*cuda\/app:nope: no such repository or tag/);
    assert.equal(missing.imageCheck.digest, null);

    const arm = await checked((await create(`${open.host}/arm/only:v1`)).id);
    assert.equal(arm.imageCheck.status, 'failed');
    assert.match(arm.imageCheck.reason, /no linux\/amd64 image \(it has linux\/arm64\)/);
    assert.deepEqual(arm.imageCheck.platforms, ['linux/arm64']);
    assert.equal((await resolve(arm.id)).imageDigest, null, 'only a verified image is pinned');

    const large = await checked((await create(`${open.host}/large:v1`, { containerDiskInGb: 20 })).id);
    assert.equal(large.imageCheck.status, 'failed');
    assert.match(large.imageCheck.reason, /compressed layers \(25\.0 GB\) exceed containerDiskInGb \(20 GB\)/);
    assert.equal(large.imageCheck.sizeBytes, 25 * GiB);
    // A larger disk is judged again from what the check found, without asking the registry: verified, and pinned.
    const bigger = await h.call('PATCH', `/v1/templates/${large.id}`, { key: alice, body: { containerDiskInGb: 30 } });
    assert.equal(bigger.body.imageCheck.status, 'verified');
    assert.equal((await resolve(large.id)).imageDigest, digests.large);
  });

  test('Basic auth: the right credentials verify; wrong ones, or none, fail naming what to fix', async () => {
    const right = await auth(PASSWORD);
    const wrong = await auth('wrong-password');
    const good = await checked((await create(`${basic.host}/private/app:v1`, { containerRegistryAuthId: right.id })).id);
    assert.equal(good.imageCheck.status, 'verified');
    assert.equal(good.imageCheck.digest, digests.basic);
    const refused = await checked((await create(`${basic.host}/private/app:v1`, { containerRegistryAuthId: wrong.id })).id);
    assert.equal(refused.imageCheck.status, 'failed');
    assert.equal(
      refused.imageCheck.reason,
      `The registry refused the credentials of registry auth ${JSON.stringify(wrong.name)}: check its username and password.`,
    );
    const none = await checked((await create(`${basic.host}/private/app:v1`)).id);
    assert.match(none.imageCheck.reason, /asked for credentials .*names no registry auth/);
    // Changing the credentials checks again.
    const fixed = await h.call('PATCH', `/v1/templates/${refused.id}`, { key: alice, body: { containerRegistryAuthId: right.id } });
    assert.equal(fixed.body.imageCheck.status, 'pending');
    assert.equal((await checked(refused.id)).imageCheck.status, 'verified');
  });

  test('token auth: a Bearer token from the realm the registry names, with the credentials; wrong ones fail', async () => {
    const right = await auth(PASSWORD);
    const wrong = await auth('wrong-password');
    const good = await checked((await create(`${token.host}/private/app:v1`, { containerRegistryAuthId: right.id })).id);
    assert.equal(good.imageCheck.status, 'verified');
    assert.equal(good.imageCheck.digest, digests.token);
    assert.ok(token.tokenRequests.some((r) => r.authorized && r.scope === 'repository:private/app:pull'));
    const refused = await checked((await create(`${token.host}/private/app:v1`, { containerRegistryAuthId: wrong.id })).id);
    assert.match(refused.imageCheck.reason, /refused the credentials of registry auth/);
    // What the token server said is never shown.
    assert.doesNotMatch(JSON.stringify(refused), /these words/);
  });

  test('a registry that does not answer: the write answers at once, the check is unreachable and retried', async () => {
    const connectionsBefore = silentSockets.length;
    const t = await create(`${silentHost}/hangs:v1`);
    assert.equal(t.imageCheck.status, 'pending', 'the create did not wait for the registry');
    const done = await checked(t.id);
    assert.equal(done.imageCheck.status, 'unreachable');
    assert.match(done.imageCheck.reason, /did not answer within 2 s/);
    await eventually('a retry', 10_000, async () => silentSockets.length >= connectionsBefore + 2);
  });

  test('hosts the rules refuse: an unlisted loopback name, a private address, a name resolving to one, the metadata address', async () => {
    const port = open.host.split(':')[1];
    const loopback = await checked((await create(`localhost:${port}/cuda/app:v1`)).id);
    assert.equal(loopback.imageCheck.status, 'failed');
    assert.match(loopback.imageCheck.reason, /localhost resolves to a loopback address \(127\.0\.0\.1|::1\)/);
    const literal = await checked((await create('10.1.2.3:5000/app:v1')).id);
    assert.match(literal.imageCheck.reason, /10\.1\.2\.3:5000 is a private address/);
    const named = await checked((await create('registry.internal.test/app:v1')).id);
    assert.match(named.imageCheck.reason, /registry\.internal\.test resolves to a private address \(10\.20\.30\.40\)/);
    const metadata = await checked((await create('169.254.169.254/latest:v1')).id);
    assert.match(metadata.imageCheck.reason, /link-local address/);
  });

  test('POST …/image-check checks now and answers the template: a tag pushed since is verified', async () => {
    const t = await checked((await create(`${open.host}/later-${dialect}:v1`)).id);
    assert.equal(t.imageCheck.status, 'failed');
    const pushed = await open.push(`later-${dialect}`, 'v1', image({ marker: 'later' }));
    const now = await h.call('POST', `/v1/templates/${t.id}/image-check`, { key: alice });
    assert.equal(now.status, 200, now.text);
    assert.equal(now.body.imageCheck.status, 'verified');
    assert.equal(now.body.imageCheck.digest, pushed);
    // Checked: the tag follows the revision with the check (a 304 never keeps a poller on the result before it).
    assert.match(String(now.headers.etag), new RegExp(`^"r${t.revision}\\.v[0-9a-z]+"$`));
    const bob = await h.key('bob');
    assert.equal((await h.call('POST', `/v1/templates/${t.id}/image-check`, { key: bob })).status, 404);
    assert.equal((await h.call('POST', `/v1/templates/${t.id}/image-check`, { key: platform })).status, 200);
  });
});
