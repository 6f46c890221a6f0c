import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { createPodplateClient } from '../../src/client/index.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { BIN, freePort, podplate, type ServerProcess, startServer } from '../support/process.ts';

// The client commands end to end: a real server, the real podplate command, a config dir of the test's own.

const IMAGE = 'runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04';

/**
 * fetch over a connection of its own. The commands run with spawnSync, which blocks this process's event loop, so a
 * pooled keep-alive socket the server closed meanwhile (it drops idle ones after REQUEST_TIMEOUT_MS) still looks
 * open to the global fetch, which then fails with "other side closed".
 */
async function freshConnection(request: Request): Promise<Response> {
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  return new Promise((resolve, reject) => {
    const headers = Object.fromEntries(request.headers);
    const outgoing = httpRequest(request.url, { method: request.method, headers, agent: false }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        const status = incoming.statusCode ?? 0;
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        resolve(new Response(status === 204 ? null : Buffer.concat(chunks), { status, headers: responseHeaders }));
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

forEachDialect('podplate client commands', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  let home: string;
  let key: string;
  let platformKey: string;
  let env: Record<string, string>;

  /** Runs podplate with the test's config dir; `input` is piped to stdin. */
  const run = (args: string[], extra: Record<string, string> = {}, input = '') => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: { ...process.env, PODPLATE_URL: '', PODPLATE_API_KEY: '', ...env, ...extra },
      input,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const ok = (args: string[], extra?: Record<string, string>) => {
    const r = run(args, extra);
    assert.equal(r.code, 0, `podplate ${args.join(' ')}\n${r.stderr}`);
    return r;
  };
  const json = (args: string[], extra?: Record<string, string>) => JSON.parse(ok([...args, '--json'], extra).stdout);
  const configFile = () => join(home, 'config', 'podplate', 'config.json');

  before(async () => {
    db = await freshDatabase(dialect);
    home = mkdtempSync(join(tmpdir(), 'podplate-cli-'));
    const dbEnv = { DATABASE_URL: db.url };
    key = podplate(['keys', 'create', '--user', 'alice'], dbEnv).stdout.trim();
    platformKey = podplate(['keys', 'create', '--user', 'ops', '--role', 'platform'], dbEnv).stdout.trim();
    server = await startServer(dbEnv);
    env = { XDG_CONFIG_HOME: join(home, 'config'), HOME: home };
  });
  after(async () => {
    await server.stop();
    await db.drop();
    rmSync(home, { recursive: true, force: true });
  });

  test('without a login or PODPLATE_* the client commands say how to log in', () => {
    const r = run(['templates', 'list']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not logged in: run podplate login/);
  });

  test('login checks the key, then saves URL and key readable by the owner only', async () => {
    const bad = run(['login', '--url', server.url, '--api-key', 'pp_wrong']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Not authenticated \(401\)/);
    assert.throws(() => statSync(configFile()), /ENOENT/, 'a refused key is not saved');

    const r = run(['login', '--url', `${server.url}/`, '--api-key', key]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Logged in to http:\/\/127\.0\.0\.1:\d+ as alice; saved in /);
    assert.equal(statSync(configFile()).mode & 0o777, 0o600);
    assert.equal(statSync(join(home, 'config', 'podplate')).mode & 0o777, 0o700);
    assert.deepEqual(JSON.parse(await readFile(configFile(), 'utf8')), { url: server.url, apiKey: key });
    assert.deepEqual(json(['templates', 'list']), []);

    const piped = run(['login', '--url', server.url, '--api-key-stdin'], {}, `${key}\n`);
    assert.equal(piped.code, 0, piped.stderr);
    assert.equal(statSync(configFile()).mode & 0o777, 0o600);
    // Without a flag, a key piped on stdin (not a terminal) is read too; the saved URL is kept.
    const implicit = run(['login'], {}, `${key}\n`);
    assert.equal(implicit.code, 0, implicit.stderr);
    assert.deepEqual(JSON.parse(await readFile(configFile(), 'utf8')), { url: server.url, apiKey: key });
    const empty = run(['login'], {}, '\n');
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /the API key is empty/);
  });

  test('PODPLATE_URL and PODPLATE_API_KEY override the saved login', async () => {
    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    // The saved key is not sent to another service than the one it was saved for.
    const elsewhere = run(['templates', 'list'], { PODPLATE_URL: deadUrl });
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.stderr, /is not the service the saved key is for .*set PODPLATE_API_KEY too/);
    assert.equal(elsewhere.stderr.includes(key), false);
    const unreachable = run(['templates', 'list'], { PODPLATE_URL: deadUrl, PODPLATE_API_KEY: key });
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, new RegExp(`podplate: cannot reach ${deadUrl}: .*ECONNREFUSED`));
    const wrongKey = run(['templates', 'list'], { PODPLATE_API_KEY: 'pp_nope' });
    assert.equal(wrongKey.code, 1);
    assert.match(wrongKey.stderr, /Not authenticated \(401\)/);
    const badKey = run(['templates', 'list'], { PODPLATE_API_KEY: `${key}\nX-Injected: 1` });
    assert.equal(badKey.code, 1);
    assert.match(badKey.stderr, /^podplate: the API key in PODPLATE_API_KEY is not a key/);
    assert.equal(badKey.stderr.includes(key), false, 'the key is never printed');
    const notUrl = run(['templates', 'list'], { PODPLATE_URL: 'podplate.example.com' });
    assert.equal(notUrl.code, 1);
    assert.match(notUrl.stderr, /^podplate: PODPLATE_URL is not an http\(s\) URL: "podplate\.example\.com"\n$/);
    // Environment alone works without any file.
    const bare = run(['templates', 'list', '--json'], {
      XDG_CONFIG_HOME: join(home, 'none'),
      PODPLATE_URL: server.url,
      PODPLATE_API_KEY: key,
    });
    assert.equal(bare.code, 0, bare.stderr);
  });

  test("a template's control characters reach the terminal as escapes, and --json keeps them", () => {
    const hostile = '# Title\u001b]52;c;cm0gLXJmIH4=\u0007\u001b[2J\u009b31m done';
    const created = json([
      'templates',
      'create',
      '--name',
      'escapes',
      '--image',
      'ubuntu',
      '--readme',
      hostile,
      '--env',
      'A=\u001b[31mred',
    ]);
    const shown = ok(['templates', 'get', created.id]).stdout;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters
    assert.doesNotMatch(shown, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    assert.match(shown, /\\x1b\]52;c;cm0gLXJmIH4=\\x07\\x1b\[2J\\x9b31m done/);
    assert.equal(json(['templates', 'get', created.id]).readme, hostile);
    ok(['templates', 'delete', created.id, '--yes']);
  });

  test('C1 controls and text-reordering characters are escaped in every format, -o json and -o yaml too, which read back the same', () => {
    const hostile = 'safe\u009b31m \u202eexe.txt \u200bzero';
    const created = json(['templates', 'create', '--name', 'reordered', '--image', 'ubuntu', '--readme', hostile]);
    const raw = /[\u0080-\u009f\u200b\u202e]/;
    for (const format of ['table', 'wide', 'json', 'yaml']) {
      const shown = ok(['templates', 'get', created.id, '-o', format]).stdout;
      assert.doesNotMatch(shown, raw, format);
      if (format === 'json') assert.equal(JSON.parse(shown).readme, hostile);
      if (format === 'yaml') assert.equal(parseYaml(shown).readme, hostile);
    }
    assert.match(ok(['templates', 'get', created.id]).stdout, /safe\\x9b31m \\u202eexe\.txt \\u200bzero/);
    ok(['templates', 'delete', created.id, '--yes']);
  });

  test('create, get, update, revisions, rollback and delete a template', () => {
    const created = json([
      'templates',
      'create',
      '--name',
      'notebook',
      '--image',
      IMAGE,
      '-p',
      '8888/http',
      '--port',
      '22/tcp',
      '-e',
      'A=1',
      '--env',
      'B=x=y',
      '--cmd',
      'python',
      '--cmd',
      'app main.py',
      '--container-disk',
      '30',
      '--public',
    ]);
    assert.equal(created.name, 'notebook');
    assert.deepEqual(created.ports, ['8888/http', '22/tcp']);
    assert.deepEqual(created.env, { A: '••••••••', B: '••••••••' }, 'env values masked without --show-values');
    assert.deepEqual(created.dockerStartCmd, ['python', 'app main.py']);
    assert.equal(created.containerDiskInGb, 30);
    assert.equal(created.isPublic, true);
    assert.equal(created.revision, 1);
    const id = created.id as string;

    assert.deepEqual(json(['templates', 'get', id]), created);
    const shown = ok(['templates', 'get', id]).stdout;
    assert.match(shown, new RegExp(`^ID:\\s+${id}$`, 'm'));
    assert.match(shown, /^Start command:\s+python 'app main\.py'$/m);
    assert.match(shown, /^Revision:\s+1 \(ETag "r1"\)$/m);

    const updated = ok(['templates', 'update', id, '--image', 'runpod/pytorch:2.2.0', '--if-match', '"r1"']);
    assert.match(
      updated.stdout,
      new RegExp(`^Updated template ${id}: revision 1 → 2, ETag "r2"\\.\n {2}imageName: "${IMAGE}" → "runpod/pytorch:2\\.2\\.0"\n$`),
    );
    const after = json(['templates', 'get', id]);
    assert.equal(after.imageName, 'runpod/pytorch:2.2.0');
    assert.deepEqual({ ...after, imageName: IMAGE, revision: 1, updatedAt: created.updatedAt }, created, 'only the image changed');

    const stale = run(['templates', 'update', id, '--readme', 'hello', '--if-match', '"r1"']);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /^podplate: Precondition failed \(412\): /);

    const cleared = json(['templates', 'update', id, '--no-env', '--no-cmd']);
    assert.deepEqual([cleared.env, cleared.dockerStartCmd, cleared.revision], [{}, [], 3]);

    const revisions = json(['templates', 'revisions', id]);
    assert.deepEqual(
      revisions.map((r: { revision: number }) => r.revision),
      [3, 2, 1],
    );
    assert.match(
      ok(['templates', 'revisions', id], { COLUMNS: '200' }).stdout,
      /^REV\s+CREATED\s+AUTHOR\s+CHANGES\n3\s+just now\s+alice\s+dockerStartCmd: .*; env: removed A, removed B\n/,
    );

    const rolled = json(['templates', 'rollback', id, '1', '--show-values']);
    assert.equal(rolled.revision, 4);
    assert.equal(rolled.imageName, IMAGE);
    assert.deepEqual(rolled.env, { A: '1', B: 'x=y' });

    const refused = run(['templates', 'delete', id]);
    assert.equal(refused.code, 2, 'not a terminal: a delete needs --yes');
    assert.match(refused.stderr, /^podplate: add --yes to delete template /);
    const deleted = run(['templates', 'rm', id, '--yes']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stderr, new RegExp(`Deleted template ${id}\\.`));
    const gone = run(['templates', 'get', id]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /^podplate: Not found \(404\): /);
  });

  test('create and update take -f template.json or template.yaml; flags override the file', () => {
    const jsonFile = join(home, 'template.json');
    writeFileSync(
      jsonFile,
      JSON.stringify({ name: 'from json', imageName: IMAGE, ports: ['8888/http'], env: { HF_HOME: '/workspace/hf' } }),
    );
    const fromJson = json(['templates', 'create', '-f', jsonFile, '--name', 'from json, renamed', '--show-values']);
    assert.equal(fromJson.name, 'from json, renamed');
    assert.deepEqual(fromJson.env, { HF_HOME: '/workspace/hf' });

    const yamlFile = join(home, 'template.yaml');
    writeFileSync(
      yamlFile,
      `name: from yaml\nimageName: ${IMAGE}\ncategory: CPU\nports:\n  - 8888/http\n  - 22/tcp\ndockerStartCmd: [python, serve.py]\n`,
    );
    const fromYaml = json(['templates', 'create', '--file', yamlFile]);
    assert.deepEqual(
      [fromYaml.name, fromYaml.category, fromYaml.ports, fromYaml.dockerStartCmd],
      ['from yaml', 'CPU', ['8888/http', '22/tcp'], ['python', 'serve.py']],
    );

    const changes = join(home, 'changes.yml');
    writeFileSync(changes, 'volumeInGb: 0\nreadme: "# Notes"\n');
    const changed = json(['templates', 'update', fromYaml.id, '-f', changes]);
    assert.deepEqual([changed.volumeInGb, changed.readme, changed.revision], [0, '# Notes', 2]);

    writeFileSync(join(home, 'broken.yaml'), 'name: [unclosed\n');
    const broken = run(['templates', 'create', '-f', join(home, 'broken.yaml')]);
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /broken\.yaml is not valid YAML/);
    const missing = run(['templates', 'create', '-f', join(home, 'absent.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*absent\.json/);
  });

  test('a problem prints its detail and each field error, exit 1', () => {
    const r = run(['templates', 'create', '--name', 'bad', '--image', 'RunPod/PyTorch', '-p', '8888/udp', '--container-disk', '0']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    const lines = r.stderr.trimEnd().split('\n');
    assert.match(lines[0] as string, /^podplate: Invalid request \(400\): The request has invalid fields/);
    assert.deepEqual(lines.slice(1).sort(), [
      '  /containerDiskInGb: must be at least 1',
      '  /imageName: repository names must be lowercase',
      '  /ports/0: must be a port from 1 to 65535 and the protocol http or tcp, like 8888/http',
    ]);
    const query = run(['templates', 'list', '--search', 'a\u0007b']);
    assert.equal(query.code, 1);
    assert.match(query.stderr, /^ {2}\/q \(query\): must not contain control characters$/m);
  });

  test('list shows a table, filters, and follows Link pages with --all', () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(json(['templates', 'create', '--name', `paged ${i}`, '--image', IMAGE]).id);
    const all = json(['templates', 'list', '--search', 'PAGED', '--limit', '2', '--all']);
    assert.deepEqual(
      all.map((t: { id: string }) => t.id),
      [...ids].reverse(),
    );
    const first = run(['templates', 'list', '--search', 'paged', '--limit', '2']);
    assert.equal(first.code, 0);
    assert.match(first.stdout, /^ID\s+NAME\s+OWNER\s+IMAGE\s+KIND\s+REV\s+CHECK\s+UPDATED\n/);
    assert.equal(first.stdout.trimEnd().split('\n').length, 3, 'a header and one page of two');
    assert.match(first.stderr, /More templates follow: add --all/);
    assert.deepEqual(json(['templates', 'list', '--search', 'paged', '--category', 'cpu']), []);
    assert.equal(json(['templates', 'list', '--category', 'CPU']).length, 1);
  });

  test('official templates show only with --platform in lists; get shows them', async () => {
    const official = await createPodplateClient({
      url: server.url,
      apiKey: platformKey,
      fetch: freshConnection,
    }).createTemplate({
      name: 'official',
      imageName: IMAGE,
      isPublic: true,
    });
    const internal = await createPodplateClient({ url: server.url, apiKey: platformKey, fetch: freshConnection }).createTemplate({
      name: 'internal',
      imageName: IMAGE,
    });
    const mine = json(['templates', 'list', '--all']).map((t: { id: string }) => t.id);
    assert.equal(mine.includes(official.value.id), false);
    const withPlatform = json(['templates', 'list', '--platform', '--all']).map((t: { id: string }) => t.id);
    assert.equal(withPlatform.includes(official.value.id), true);
    assert.equal(withPlatform.includes(internal.value.id), false, "a private official template is the platform's alone");
    assert.match(ok(['templates', 'get', official.value.id]).stdout, /^Visibility:\s+official$/m);
  });

  test('endpoints and releases: create, list, and watch a release to completion or failure', async () => {
    const template = json(['templates', 'create', '--name', 'worker', '--image', IMAGE, '--serverless']);
    const endpoint = json(['endpoints', 'create', '--name', 'inference', '--template', template.id, '--workers-max', '2']);
    assert.deepEqual([endpoint.templateId, endpoint.workersMax, endpoint.version], [template.id, 2, 1]);
    assert.deepEqual(json(['endpoints', 'get', endpoint.id]), endpoint);
    assert.deepEqual(json(['endpoints', 'list']), [endpoint]);
    assert.match(
      ok(['endpoints', 'list']).stdout,
      new RegExp(`^ID\\s+NAME\\s+TEMPLATE.*\\n${endpoint.id}\\s+inference\\s+worker\\s+0-2\\s+1`),
    );

    const updated = json(['templates', 'update', template.id, '--image', 'runpod/pytorch:2.2.0']);
    const releases = json(['releases', 'list', endpoint.id]);
    assert.equal(releases.length, 1);
    assert.deepEqual([releases[0].templateRevision, releases[0].status], [updated.revision, 'pending']);
    assert.match(ok(['releases', 'list', endpoint.id]).stdout, /^ID\s+VERSION\s+TEMPLATE REV\s+STATUS.*\n\S+\s+2\s+2\s+pending\s+0\/0/);

    const waiting = run(['releases', 'watch', endpoint.id, '--interval', '0.05', '--timeout', '0.2']);
    assert.equal(waiting.code, 1);
    assert.match(waiting.stderr, /^release 2 \(\S+, template revision \d+\): waiting for the platform to pick it up\n/);
    assert.match(waiting.stderr, /gave up waiting for its newest release of endpoint .*: still pending/);

    const orchestrator = createPodplateClient({ url: server.url, apiKey: platformKey, fetch: freshConnection });
    await orchestrator.reportReleaseProgress(endpoint.id, releases[0].id, { status: 'completed', workersUpdated: 2, workersTotal: 2 });
    const done = run([
      'releases',
      'watch',
      '--template',
      template.id,
      '--revision',
      String(updated.revision),
      '--interval',
      '0.05',
      '--json',
    ]);
    assert.equal(done.code, 0, done.stderr);
    assert.deepEqual([JSON.parse(done.stdout).id, JSON.parse(done.stdout).status], [releases[0].id, 'completed']);

    const again = json(['templates', 'update', template.id, '--image', 'runpod/pytorch:2.3.0']);
    const [newest] = json(['releases', 'list', endpoint.id]);
    await orchestrator.reportReleaseProgress(endpoint.id, newest.id, { status: 'failed', workersUpdated: 1, workersTotal: 2 });
    const failed = run(['releases', 'watch', '--template', template.id, '--revision', String(again.revision), '--interval', '0.05']);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /: failed after 1 of 2 workers\npodplate: release \d+ \(\S+\): failed after 1 of 2 workers\n$/);

    // A revision whose release is older than the newest 20 is still found (here superseded: exit 1).
    const owner = createPodplateClient({ url: server.url, apiKey: key, fetch: freshConnection });
    for (let i = 0; i < 21; i++) await owner.updateTemplate(template.id, { readme: `change ${i}` });
    const old = run(['releases', 'watch', '--template', template.id, '--revision', String(again.revision), '--timeout', '60']);
    assert.equal(old.code, 1, old.stderr);
    assert.match(old.stderr, /release \d+ \(\S+\): failed after 1 of 2 workers\n$/);

    // Revision 1 predates the endpoint, so it has no release: nothing to wait for.
    const before = run(['releases', 'watch', endpoint.id, '--revision', '1', '--timeout', '60']);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stderr, /Template revision 1 started no release on endpoint \S+ .*nothing to wait for/);

    const unbound = run(['releases', 'watch', '--template', 'nosuchtemplate']);
    assert.equal(unbound.code, 1);
    assert.match(unbound.stderr, /is not bound to any of your endpoints/);

    assert.equal(run(['templates', 'delete', template.id, '--yes']).code, 1, 'a bound template cannot be deleted');
    assert.equal(run(['endpoints', 'delete', endpoint.id, '--yes']).code, 0);
    assert.deepEqual(json(['endpoints', 'list']), []);
  });

  test('registry-auth: the password from stdin, a template that uses it, list, and delete (409 while used)', async () => {
    const created = run(['registry-auth', 'create', '--name', 'ghcr', '--username', 'octocat', '--password-stdin'], {}, 'ghp_cli-s3cret\n');
    assert.equal(created.code, 0, created.stderr);
    const id = /^Created registry auth ([0-9a-z]{16})\./.exec(created.stdout)?.[1] as string;
    assert.ok(id, created.stdout);
    assert.match(created.stdout, /^Name:\s+ghcr$/m);
    assert.match(created.stderr, new RegExp(`podplate templates update <template-id> --registry-auth ${id}`));
    assert.equal((created.stdout + created.stderr).includes('s3cret'), false);
    // The platform reads back what was piped, without the trailing newline.
    const launcher = createPodplateClient({ url: server.url, apiKey: platformKey, fetch: freshConnection });
    assert.deepEqual(await launcher.registryAuthCredentials(id), { username: 'octocat', password: 'ghp_cli-s3cret' });

    const t = json(['templates', 'create', '--name', 'private image', '--image', 'ghcr.io/acme/private:1', '--registry-auth', id]);
    assert.equal(t.containerRegistryAuthId, id);
    assert.match(ok(['templates', 'get', t.id]).stdout, new RegExp(`^Registry auth:\\s+${id}$`, 'm'));
    assert.match(ok(['registry-auth', 'list']).stdout, new RegExp(`^ID\\s+NAME\\s+CREATED\\n${id}\\s+ghcr\\s+just now\\n$`));
    assert.deepEqual(
      json(['registry-auth', 'list']).map((a: { id: string }) => a.id),
      [id],
    );

    const used = run(['registry-auth', 'delete', id, '--yes']);
    assert.equal(used.code, 1);
    assert.match(used.stderr, new RegExp(`^podplate: Conflict \\(409\\): Templates still use this registry auth, such as ${t.id}`));
    const foreign = run(['templates', 'update', t.id, '--registry-auth', 'nosuchauth000000']);
    assert.equal(foreign.code, 1);
    assert.match(foreign.stderr, /^ {2}\/containerRegistryAuthId: is not the id of a registry auth of yours/m);
    assert.equal(json(['templates', 'update', t.id, '--registry-auth', '']).containerRegistryAuthId, '');
    const deleted = run(['registry-auth', 'delete', id, '--yes']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stderr, new RegExp(`Deleted registry auth ${id}\\.`));
    assert.match(run(['registry-auth', 'list']).stderr, /No registry auths\./);
    ok(['templates', 'delete', t.id, '--yes']);
  });

  test('usage errors exit 2 in one or two lines, with "did you mean" and where the usage is', () => {
    const cases: [string[], RegExp][] = [
      [['templates', 'frobnicate'], /unknown command 'frobnicate'/],
      [['templates', 'lst'], /unknown command 'lst' \(did you mean one of list, ls\?\)/],
      [['templates', 'get'], /missing required argument 'template-id'/],
      [['templates', 'get', 'a', 'b'], /too many arguments/],
      [['templates', 'list', '--colour'], /unknown option '--colour'/],
      [['templates', 'create', '--nme', 'x'], /unknown option '--nme' \(did you mean --name\?\)/],
      [['templates', 'list', '-o', 'xml'], /argument 'xml' is invalid/],
      [['templates', 'list', '--category', 'TPU'], /--category is one of NVIDIA, AMD, CPU/],
      [['templates', 'list', '--limit', 'ten'], /--limit must be a whole number/],
      [['templates', 'create', '--image', IMAGE], /a template needs --name/],
      [
        ['templates', 'create', '--name', 'x', '--image', IMAGE, '--env', 'NOVALUE'],
        /--env takes KEY=VALUE \(the argument given has no "=" after a name\)$/m,
      ],
      [['templates', 'create', '--name', 'x', '--image', IMAGE, '--port', 'http'], /--port takes <port>\/<http\|tcp>/],
      [['templates', 'create', '--name', 'x', '--image', IMAGE, '--container-disk', '1.5'], /--container-disk must be a whole number/],
      [['templates', 'rollback', 'abc'], /missing required argument 'revision'/],
      // <revision> is an argument: the message names no --revision flag, which does not exist.
      [
        ['templates', 'rollback', 'abc', 'two'],
        /^podplate: <revision> must be a whole number \(podplate templates revisions abc lists them\), not "two"\n/,
      ],
      // -f - names stdin as such, and says when nothing came.
      [
        ['templates', 'create', '-f', '-'],
        /^podplate: stdin \(-f -\) is empty: pipe a template into it, e.g\. podplate templates get <id> -o yaml \| /,
      ],
      [['templates', 'update', 'abc', '-f', '-'], /^podplate: stdin \(-f -\) is empty/],
      [['templates', 'create', '-f', 'nothing-here.yaml'], /^podplate: cannot read nothing-here\.yaml: /],
      [['endpoints', 'create', '--name', 'x'], /an endpoint needs --template/],
      [['endpoints', 'update', 'abc'], /nothing to change/],
      [['releases', 'watch'], /give an <endpoint-id> or --template/],
      [['releases', 'watch', 'e', '--timeout', 'soon'], /--timeout takes seconds/],
      [['login', '--url', 'ftp://x', '--api-key', 'k'], /--url must be an http\(s\) URL/],
      [['completion', 'powershell'], /completion is for bash, zsh, fish/],
      [['registry-auth', 'create', '--name', 'x', '--username', 'u'], /give the password on stdin, with --password-stdin/],
      [['registry-auth', 'create', '--username', 'u', '--password-stdin'], /registry credentials need --name/],
      [['registry-auth', 'create', '--name', 'x', '--username', 'u', '--password', 'p'], /unknown option '--password'/],
      [['registry-auth', 'delete'], /missing required argument 'registry-auth-id'/],
      [['registry-auth', 'create', '--name', 'x', '--username', 'u', '--password-stdin'], /the password read from stdin is empty/],
      [['endpoints', 'rm', 'abc'], /add --yes to delete endpoint abc/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', args.join(' '));
      assert.match(r.stderr, message, args.join(' '));
      assert.match(r.stderr, /^podplate: [^\n]+\n\(podplate [^\n]*--help shows the usage\)\n$/, `${args.join(' ')}: ${r.stderr}`);
    }
    // A list piped in (templates list -o json) is not one template: said so, naming stdin.
    const list = run(['templates', 'create', '-f', '-'], {}, '[{"name": "a", "imageName": "a/b:1"}]');
    assert.equal(list.code, 2);
    assert.match(
      list.stderr,
      /^podplate: stdin \(-f -\) holds a list: it takes one template, as templates get <id> -o json\|yaml prints it\n/,
    );
    const group = run(['templates']);
    assert.equal(group.code, 2);
    assert.match(group.stderr, /^Usage: podplate templates/);
  });

  test('--help on every command shows its usage, flags and an example, exit 0', () => {
    const commands = [
      ['login'],
      ['whoami'],
      ['completion'],
      ...['list', 'get', 'create', 'copy', 'update', 'delete', 'revisions', 'rollback'].map((c) => ['templates', c]),
      ...['list', 'get', 'create', 'update', 'delete'].map((c) => ['endpoints', c]),
      ...['list', 'watch'].map((c) => ['releases', c]),
      ...['create', 'list', 'delete'].map((c) => ['registry-auth', c]),
    ];
    for (const command of commands) {
      const r = run([...command, '--help']);
      assert.equal(r.code, 0, command.join(' '));
      assert.match(r.stdout, new RegExp(`^Usage: podplate ${command.join(' ')}`), command.join(' '));
      assert.match(r.stdout, /Examples:\n {2}(source <\(podplate|podplate )/, command.join(' '));
    }
    for (const [group, sub] of [
      ['templates', 'ls'],
      ['templates', 'rm'],
      ['templates', 'remove'],
      ['endpoints', 'ls'],
      ['endpoints', 'rm'],
    ]) {
      assert.match(run([group as string, sub as string, '--help']).stdout, new RegExp(`^Usage: podplate ${group} (list|delete)\\|`));
    }
    for (const group of ['templates', 'endpoints', 'releases', 'registry-auth']) assert.equal(run([group, '--help']).code, 0);
    const top = run(['--help']);
    assert.match(top.stdout, /templates\|template/);
    assert.match(top.stdout, /whoami/);
    assert.match(top.stdout, /completion <shell>/);
    assert.match(top.stdout, /keys create --user <name>/);
    assert.match(top.stdout, /Exit codes: 0 success, 1 API, network or release failure, 2 usage error/);
    const list = run(['templates', 'list', '--help']).stdout;
    for (const flag of ['-o, --output <format>', '-q, --quiet', '--no-headers', '--json'])
      assert.ok(list.includes(flag), `templates list --help shows ${flag}`);
    const update = run(['templates', 'update', '--help']).stdout;
    for (const flag of ['--unset-env', '--unset-port', '--replace-env', '--replace-ports', '--if-match'])
      assert.ok(update.includes(flag), `templates update --help shows ${flag}`);
    assert.ok(run(['templates', 'delete', '--help']).stdout.includes('-y, --yes'));
    const version = run(['--version']);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
  });

  test('logout forgets the saved login', () => {
    const r = run(['logout']);
    assert.equal(r.code, 0);
    assert.throws(() => statSync(configFile()), /ENOENT/);
    assert.equal(run(['templates', 'list']).code, 1);
  });
});
