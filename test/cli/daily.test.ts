import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { call, podplate, type ServerProcess, startServer } from '../support/process.ts';

// Daily use of the CLI as a user would meet it: no env value is printed by update, revisions, get, list or -o json|yaml
// unless --show-values; your own template stays listed once an endpoint runs it; endpoints are shown with their
// template's name.

const OLD = 'hunter2-sentinel';
const NEW = 'newpass123-sentinel';
const MODEL = 'sdxl-base-sentinel';

forEachDialect('podplate daily use', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  let home: string;
  let key: string;
  let id: string;
  let endpointId: string;

  const run = (args: string[], input = '') =>
    podplate(
      args,
      { PODPLATE_URL: server.url, PODPLATE_API_KEY: key, XDG_CONFIG_HOME: join(home, 'config'), HOME: home, COLUMNS: '200' },
      input,
    );
  const ok = (args: string[], input = '') => {
    const r = run(args, input);
    assert.equal(r.code, 0, `podplate ${args.join(' ')}\n${r.stderr}`);
    return r;
  };
  /** Neither the old nor the new value, nor the harmless one, anywhere in what the command printed. */
  const noValues = (args: string[]) => {
    const r = ok(args);
    for (const value of [OLD, NEW, MODEL])
      assert.equal(`${r.stdout}${r.stderr}`.includes(value), false, `podplate ${args.join(' ')} printed ${value}:\n${r.stdout}`);
    return r.stdout;
  };

  before(async () => {
    db = await freshDatabase(dialect);
    home = mkdtempSync(join(tmpdir(), 'podplate-cli-daily-'));
    const dbEnv = { DATABASE_URL: db.url, KEY_CACHE_TTL_MS: '0' };
    key = podplate(['keys', 'create', '--user', 'alice'], dbEnv).stdout.trim();
    server = await startServer(dbEnv);
    const created = await call(server, key, 'POST', '/v1/templates', {
      name: 'notebook',
      imageName: 'runpod/pytorch:2.1.0',
      isServerless: true,
      env: { JUPYTER_PASSWORD: OLD, MODEL, HF_TOKEN: '{{ secret.HF_TOKEN }}' },
    });
    id = created.body.id;
  });
  after(async () => {
    await server.stop();
    await db.drop();
    rmSync(home, { recursive: true, force: true });
  });

  test('update prints which variables changed, never their values, in a table and in -o json|yaml', () => {
    const changed = noValues(['templates', 'update', id, '-e', `JUPYTER_PASSWORD=${NEW}`]);
    assert.match(changed, /env: changed JUPYTER_PASSWORD/);
    const json = JSON.parse(noValues(['templates', 'update', id, '--image', 'runpod/pytorch:2.2.0', '--json']));
    assert.equal(json.revision, 3, 'the CI recipe reads the revision from it');
    assert.equal(json.env.HF_TOKEN, '{{ secret.HF_TOKEN }}', 'a secret reference is shown as written');
    assert.equal(json.env.JUPYTER_PASSWORD, '••••••••');
    noValues(['templates', 'update', id, '--container-disk', '60', '-o', 'yaml']);
    assert.match(ok(['templates', 'update', id, '-e', `MODEL=${MODEL}-2`, '--show-values']).stdout, new RegExp(`${MODEL}-2`));
  });

  test('revisions, get and list print no value without --show-values, in every format', () => {
    for (const format of ['table', 'wide', 'json', 'yaml']) {
      noValues(['templates', 'revisions', id, '-o', format]);
      noValues(['templates', 'get', id, '-o', format]);
      noValues(['templates', 'list', '-o', format]);
    }
    assert.match(noValues(['templates', 'revisions', id]), /env: changed JUPYTER_PASSWORD/);
    const revisions = JSON.parse(ok(['templates', 'revisions', id, '-o', 'json', '--show-values']).stdout);
    assert.ok(JSON.stringify(revisions).includes(OLD) && JSON.stringify(revisions).includes(NEW));
    assert.equal(JSON.parse(ok(['templates', 'get', id, '--json', '--show-values']).stdout).env.JUPYTER_PASSWORD, NEW);
    assert.equal(parseYaml(ok(['templates', 'get', id, '-o', 'yaml', '--show-values']).stdout).env.MODEL, `${MODEL}-2`);
  });

  test('a masked file is refused by create -f, saying to read it with --show-values', () => {
    const masked = ok(['templates', 'get', id, '-o', 'yaml']).stdout;
    const refused = run(['templates', 'create', '-f', '-', '--name', 'copy'], masked);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /JUPYTER_PASSWORD.*masked.*--show-values/);
  });

  test('your own template stays listed once an endpoint runs it, and the endpoint table names it', async () => {
    const endpoint = await call(server, key, 'POST', '/v1/endpoints', { name: 'notebook-prod', templateId: id, workersMax: 2 });
    assert.equal(endpoint.status, 200, JSON.stringify(endpoint.body));
    endpointId = endpoint.body.id;
    assert.deepEqual(ok(['templates', 'ls', '-q']).stdout.trim().split('\n'), [id]);
    assert.match(ok(['templates', 'ls', '-s', 'note']).stdout, /notebook/);
    assert.deepEqual(ok(['templates', 'ls', '-q', '--no-bound']).stdout.trim(), '');
    assert.match(ok(['templates', 'list', '--help']).stdout, /bound to an endpoint are included/);
    const table = ok(['endpoints', 'ls']).stdout;
    assert.match(table, /TEMPLATE/);
    assert.match(table, /notebook-prod\s+notebook\s/);
    assert.match(ok(['endpoints', 'get', endpoint.body.id]).stdout, new RegExp(`Template:\\s+notebook \\(${id}\\)`));
  });

  test('releases say where they stand: waiting for the platform to pick them up, or superseded by which', () => {
    ok(['templates', 'update', id, '--readme', 'one']);
    ok(['templates', 'update', id, '--readme', 'two']);
    const table = ok(['releases', 'list', endpointId]).stdout;
    assert.match(table, /\n\S+\s+3\s+\d+\s+pending\s+0\/0\s+waiting for the platform to pick it up\s/);
    assert.match(table, /\n\S+\s+2\s+\d+\s+superseded\s+0\/0\s+superseded by release 3\s/);
    assert.doesNotMatch(table, /WEBHOOK/, 'the delivery is for -o wide');
  });
});
