import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { podplate, type ServerProcess, startServer } from '../support/process.ts';
import { image, startRegistry, type TestRegistry } from '../support/registry.ts';

// The CLI and a server process with image checks on, against a real registry: `templates check` waits for the result
// and exits 1 when it failed (for CI); `get` and `list` show the status and size; `repin` follows the tag.

let registry: TestRegistry;
before(async () => {
  registry = await startRegistry('none');
});
after(() => registry.stop());

forEachDialect('podplate templates check and repin', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  let env: Record<string, string>;
  let digest: string;

  before(async () => {
    db = await freshDatabase(dialect);
    const key = podplate(['keys', 'create', '--user', 'alice'], { DATABASE_URL: db.url }).stdout.trim();
    server = await startServer({
      DATABASE_URL: db.url,
      IMAGE_CHECK: 'on',
      IMAGE_CHECK_INSECURE_REGISTRIES: registry.hosts.join(','),
      IMAGE_CHECK_POLL_MS: '50',
      LOG_LEVEL: 'warn',
    });
    env = { PODPLATE_URL: server.url, PODPLATE_API_KEY: key };
    digest = await registry.push(`cli-${dialect}`, 'v1', image({ env: ['CUDA_VERSION=12.2.0'], marker: `cli ${dialect}` }));
  });
  after(async () => {
    await server.stop();
    await db.drop();
  });

  const run = (args: string[]) => podplate(args, env);
  const created = (imageName: string) => {
    const r = run(['templates', 'create', '--name', `t ${Math.random()}`, '--image', imageName, '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout).id as string;
  };

  test('check waits for the result and exits 0 when verified, 1 when failed; get and list show the check', () => {
    const good = created(`${registry.host}/cli-${dialect}:v1`);
    const checked = run(['templates', 'check', good]);
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stdout, /verified/);
    assert.match(checked.stdout, new RegExp(`digest ${digest}`));
    assert.match(checked.stdout, /CUDA 12\.2\.0/);
    const shown = run(['templates', 'get', good]);
    assert.match(shown.stdout, /Image check:\s+verified/);
    const listed = podplate(['templates', 'ls'], { ...env, COLUMNS: '200' });
    assert.match(listed.stdout, /^ID\s+NAME\s+OWNER\s+IMAGE\s+KIND\s+REV\s+CHECK\s+UPDATED$/m);
    assert.match(listed.stdout, /\s1\s+verified 0\.0 GB\s+just now$/m);

    const bad = created(`${registry.host}/cli-${dialect}:missing`);
    const failed = run(['templates', 'check', bad]);
    assert.equal(failed.code, 1);
    assert.match(failed.stdout, /failed/);
    assert.match(failed.stderr, /the image check failed: The registry has no image .*no such repository or tag/);
  });

  test('repin follows a tag pushed again; the same digest changes nothing', async () => {
    const id = created(`${registry.host}/cli-${dialect}:v1`);
    assert.equal(run(['templates', 'check', id]).code, 0);
    const same = run(['templates', 'repin', id]);
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stdout, /no change/);
    const fresh = await registry.push(`cli-${dialect}`, 'v1', image({ marker: `cli ${dialect} again` }));
    const moved = run(['templates', 'repin', id]);
    assert.equal(moved.code, 0, moved.stderr);
    assert.match(moved.stdout, new RegExp(`revision 1 → 2, ETag "r2\\.v[0-9a-z]+"\\.\\n  imageDigest: ${digest} → ${fresh}`));
  });
});
