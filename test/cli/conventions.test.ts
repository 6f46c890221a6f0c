import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { BIN, podplate, type ServerProcess, startServer } from '../support/process.ts';

// The CLI conventions of issue #18, each flag end to end: the real command against a real server, at 80 and 100
// columns.

const IMAGE = 'runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04';

forEachDialect('podplate CLI conventions', (dialect) => {
  let db: Database;
  let server: ServerProcess;
  let home: string;
  let env: Record<string, string>;

  const run = (args: string[], extra: Record<string, string> = {}, input = '') => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env, ...extra },
      input,
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const ok = (args: string[], extra?: Record<string, string>, input?: string) => {
    const r = run(args, extra, input);
    assert.equal(r.code, 0, `podplate ${args.join(' ')}\n${r.stderr}`);
    return r;
  };
  const json = (args: string[]) => JSON.parse(ok([...args, '-o', 'json']).stdout);

  before(async () => {
    db = await freshDatabase(dialect);
    home = mkdtempSync(join(tmpdir(), 'podplate-conventions-'));
    const dbEnv = { DATABASE_URL: db.url, KEY_CACHE_TTL_MS: '0' };
    const key = podplate(['keys', 'create', '--user', 'carol'], dbEnv).stdout.trim();
    server = await startServer(dbEnv);
    // The URL with /v1, as people copy it from the API reference: the CLI takes it either way.
    env = { XDG_CONFIG_HOME: join(home, 'config'), HOME: home, PODPLATE_URL: `${server.url}/v1/`, PODPLATE_API_KEY: key, COLUMNS: '' };
  });
  after(async () => {
    await server.stop();
    await db.drop();
    rmSync(home, { recursive: true, force: true });
  });

  test('--version and whoami (-o json|yaml)', () => {
    assert.match(ok(['--version']).stdout, /^\d+\.\d+\.\d+\n$/);
    assert.match(ok(['-V']).stdout, /^\d+\.\d+\.\d+\n$/);
    const me = ok(['whoami']).stdout;
    assert.match(me, /^Account:\s+carol \(acc_\w+\)$/m);
    assert.match(me, /^Role:\s+user$/m);
    assert.match(me, /^Key:\s+key_\w+ \(pp_\S+…\)$/m);
    const asJson = json(['whoami']);
    assert.deepEqual([asJson.accountName, asJson.isPlatform, asJson.url], ['carol', false, server.url]);
    assert.equal(parseYaml(ok(['whoami', '-o', 'yaml']).stdout).accountName, 'carol');
  });

  test('tables fit 80 and 100 columns, -o wide shows every column in full, relative times, -q, --no-headers', () => {
    const long = `a-template-with-a-rather-long-name-${'x'.repeat(40)}`;
    const image = `registry.example.com:5000/team/${'deep/'.repeat(6)}image:1.0`;
    const t = json(['templates', 'create', '--name', long, '--image', image, '-p', '8888/http']);
    for (const columns of ['80', '100']) {
      const table = ok(['templates', 'ls'], { COLUMNS: columns }).stdout;
      const lines = table.trimEnd().split('\n');
      assert.match(lines[0] as string, /^ID\s+NAME\s+OWNER\s+IMAGE\s+KIND\s+REV\s+CHECK\s+UPDATED$/);
      for (const line of lines) assert.ok(line.length <= Number(columns), `${line.length} > ${columns}: ${line}`);
      assert.match(table, new RegExp(`^${t.id}\\s+a-template-\\S*…\\s+carol\\s+registry\\S*…\\s+pod\\s+1\\s+off\\s+just now$`, 'm'));
    }
    const wide = ok(['templates', 'ls', '-o', 'wide'], { COLUMNS: '80' }).stdout;
    assert.match(
      wide.split('\n')[0] as string,
      /^ID\s+NAME\s+OWNER\s+IMAGE\s+CATEGORY\s+KIND\s+VISIBILITY\s+PORTS\s+REV\s+CHECK\s+CREATED\s+UPDATED$/,
    );
    assert.ok(wide.includes(long) && wide.includes(image), 'wide cuts nothing');
    // Not a terminal and no COLUMNS: 80.
    for (const line of ok(['templates', 'ls']).stdout.trimEnd().split('\n')) assert.ok(line.length <= 80, line);
    assert.equal(ok(['templates', 'ls', '-q']).stdout, `${t.id}\n`);
    const bare = ok(['templates', 'ls', '--no-headers'], { COLUMNS: '100' }).stdout;
    assert.match(bare, new RegExp(`^${t.id}\\s`));
    assert.equal(bare.trimEnd().split('\n').length, 1);
    assert.deepEqual(
      parseYaml(ok(['templates', 'ls', '-o', 'yaml']).stdout).map((x: { id: string }) => x.id),
      [t.id],
    );
    assert.match(ok(['templates', 'get', t.id]).stdout, /^Created:\s+\S+ \(just now\)$/m);
    ok(['templates', 'rm', t.id, '--yes']);
  });

  test('update: --env/--port merge, --unset-env/--unset-port, --replace-env/--replace-ports; a diff, or No changes', () => {
    const t = json([
      'templates',
      'create',
      '--name',
      'merge',
      '--image',
      IMAGE,
      '-e',
      'A=1',
      '-e',
      'B=2',
      '-p',
      '8888/http',
      '-p',
      '22/tcp',
    ]);
    const merged = ok(['templates', 'update', t.id, '--env', 'C=3', '--unset-env', 'A', '--port', '8080/http', '--unset-port', '22/tcp']);
    assert.equal(
      merged.stdout,
      `Updated template ${t.id}: revision 1 → 2, ETag "r2".\n` +
        '  env: removed A, added C\n' +
        '  ports: ["8888/http","22/tcp"] → ["8888/http","8080/http"]\n',
    );
    const now = json(['templates', 'get', t.id, '--show-values']);
    assert.deepEqual([now.env, now.ports], [{ B: '2', C: '3' }, ['8888/http', '8080/http']]);
    const replaced = json([
      'templates',
      'update',
      t.id,
      '--replace-env',
      '-e',
      'ONLY=1',
      '--replace-ports',
      '-p',
      '9000/tcp',
      '--show-values',
    ]);
    assert.deepEqual([replaced.env, replaced.ports], [{ ONLY: '1' }, ['9000/tcp']]);
    const cleared = json(['templates', 'update', t.id, '--replace-env', '--no-ports']);
    assert.deepEqual([cleared.env, cleared.ports, cleared.revision], [{}, [], 4]);
    const same = ok(['templates', 'update', t.id, '--image', IMAGE]);
    assert.equal(same.stdout, `No changes: template ${t.id} stays at revision 4.\n`);
    // ETags bare or quoted.
    assert.equal(ok(['templates', 'update', t.id, '--readme', 'hi', '--if-match', 'r4']).code, 0);
    const stale = run(['templates', 'update', t.id, '--readme', 'again', '--if-match', 'r4']);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /Precondition failed \(412\)/);
    assert.equal(ok(['templates', 'delete', t.id, '--yes', '--if-match', 'r5']).code, 0);
  });

  test('update: a clearing flag (--no-env …) with the flag it clears is a short usage error, in either order', () => {
    const t = json(['templates', 'create', '--name', 'clears', '--image', IMAGE, '-e', 'KEEP=1', '-p', '8888/http', '--cmd', 'sleep']);
    for (const [args, message] of [
      [
        ['--no-env', '-e', 'X=1'],
        /^podplate: --no-env and --env exclude each other: give --replace-env --env KEY=VALUE to make them the whole environment\n/,
      ],
      [['-e', 'X=1', '--no-env'], /^podplate: --no-env and --env exclude each other/],
      [['--no-ports', '-p', '9000/tcp'], /^podplate: --no-ports and --port exclude each other: give --replace-ports --port/],
      [['--no-cmd', '--cmd', 'x'], /^podplate: --no-cmd and --cmd exclude each other/],
      [['--entrypoint', 'x', '--no-entrypoint'], /^podplate: --no-entrypoint and --entrypoint exclude each other/],
    ] as const) {
      const r = run(['templates', 'update', t.id, ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trimEnd().split('\n').length, 2, r.stderr);
    }
    const now = json(['templates', 'get', t.id, '--show-values']);
    assert.deepEqual([now.env, now.ports, now.dockerStartCmd, now.revision], [{ KEEP: '1' }, ['8888/http'], ['sleep'], 1]);
  });

  test('copy, and create -f from what get printed (server-set fields dropped, said on stderr)', () => {
    const t = json(['templates', 'create', '--name', 'original', '--image', IMAGE, '-e', 'K=V', '--public']);
    const copied = json(['templates', 'copy', t.id, '--name', 'the copy', '--show-values']);
    assert.notEqual(copied.id, t.id);
    assert.deepEqual(
      [copied.name, copied.imageName, copied.env, copied.isPublic, copied.revision],
      ['the copy', IMAGE, { K: 'V' }, true, 1],
    );
    assert.match(ok(['templates', 'copy', t.id]).stdout, new RegExp(`^Copied template ${t.id} to \\w+\\.`));
    for (const format of ['json', 'yaml']) {
      const file = join(home, `got.${format}`);
      writeFileSync(file, ok(['templates', 'get', t.id, '-o', format, '--show-values']).stdout);
      const r = ok(['templates', 'create', '-f', file, '--name', `from ${format}`, '-o', 'json', '--show-values']);
      assert.match(
        r.stderr,
        /^Left out what the server sets: id, isPlatform, earned, runtimeInMin, revision, createdAt, updatedAt, imageCheck\.\n$/,
      );
      assert.deepEqual(JSON.parse(r.stdout).env, { K: 'V' });
    }
    const piped = run(
      ['templates', 'create', '-f', '-', '--name', 'from stdin', '-o', 'json'],
      {},
      ok(['templates', 'get', t.id, '-o', 'yaml', '--show-values']).stdout,
    );
    assert.equal(piped.code, 0, piped.stderr);
  });

  test('endpoints update prints its diff and the release a rebind starts; deletes need --yes off a terminal', () => {
    const a = json(['templates', 'create', '--name', 'worker a', '--image', IMAGE, '--serverless']);
    const b = json(['templates', 'create', '--name', 'worker b', '--image', 'runpod/worker:2', '--serverless']);
    const e = json(['endpoints', 'create', '--name', 'infer', '--template', a.id]);
    assert.equal(ok(['endpoints', 'update', e.id, '--workers-max', '3']).stdout, `No changes: endpoint ${e.id} is as it was.\n`);
    const resized = ok(['endpoints', 'update', e.id, '--workers-max', '6', '--name', 'inference']);
    assert.equal(resized.stdout, `Updated endpoint ${e.id}.\n  name: "infer" → "inference"\n  workersMax: 3 → 6\n`);
    const rebound = ok(['endpoints', 'edit', e.id, '--template', b.id]);
    assert.match(
      rebound.stdout,
      new RegExp(`templateId: "${a.id}" → "${b.id}"\\nA rolling release to template ${b.id} started \\(version 2\\)\\.\\n$`),
    );
    const [release] = json(['releases', 'ls', e.id]);
    assert.deepEqual([release.templateId, release.version], [b.id, 2]);
    for (const columns of ['80', '100']) {
      for (const line of ok(['endpoints', 'ls'], { COLUMNS: columns }).stdout.trimEnd().split('\n'))
        assert.ok(line.length <= Number(columns), line);
    }
    const refused = run(['endpoints', 'rm', e.id]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /add --yes to delete endpoint/);
    assert.equal(json(['endpoints', 'get', e.id]).id, e.id, 'not deleted');
    ok(['endpoints', 'remove', e.id, '-y']);
    assert.equal(run(['endpoints', 'get', e.id]).code, 1);
  });

  test('revisions show their author by account name', () => {
    const t = json(['templates', 'create', '--name', 'authored', '--image', IMAGE]);
    ok(['templates', 'update', t.id, '--readme', 'v2']);
    const history = ok(['templates', 'history', t.id], { COLUMNS: '100' }).stdout;
    assert.match(
      history,
      /^REV\s+CREATED\s+AUTHOR\s+CHANGES\n2\s+just now\s+carol\s+readme: "" → "v2"\n1\s+just now\s+carol\s+\(created\)\n$/,
    );
  });

  test('completion scripts for bash, zsh and fish complete commands, aliases and flags', () => {
    const bash = ok(['completion', 'bash']).stdout;
    const complete = (words: string[]) => {
      const script = `source /dev/stdin <<'EOF'\n${bash}\nEOF\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _podplate; echo "\${COMPREPLY[*]}"`;
      const r = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.trim().split(' ');
    };
    assert.deepEqual(complete(['podplate', 'tem']), ['templates', 'template']);
    assert.deepEqual(complete(['podplate', 'templates', 'l']), ['list', 'ls']);
    assert.deepEqual(complete(['podplate', 'templates', 'update', 'abc', '--unset']), ['--unset-env', '--unset-port']);
    assert.deepEqual(complete(['podplate', 'endpoints', 'rm', 'x', '--y']), ['--yes']);
    // Values too: a flag's choices after it, and the shells after completion.
    assert.deepEqual(complete(['podplate', 'templates', 'ls', '-o', '']), ['table', 'wide', 'json', 'yaml']);
    assert.deepEqual(complete(['podplate', 'whoami', '--output', 'y']), ['yaml']);
    assert.deepEqual(complete(['podplate', 'completion', '']), ['bash', 'zsh', 'fish', '--help', '-h']);
    const zsh = ok(['completion', 'zsh']).stdout;
    assert.match(zsh, /^#compdef podplate\n/);
    assert.match(zsh, /'--replace-env:the --env values replace/);
    const fish = ok(['completion', 'fish']).stdout;
    assert.match(
      fish,
      /complete -c podplate -n "__fish_seen_subcommand_from templates template; and __fish_seen_subcommand_from update edit" -l unset-env/,
    );
    assert.match(fish, /-l output -s o -x -a 'table wide json yaml'/);
    for (const [shell, text] of [
      ['zsh', zsh],
      ['fish', fish],
    ] as const) {
      const check = spawnSync(shell, ['-n'], { input: text, encoding: 'utf8' });
      if (check.error) continue; // the shell is not installed here
      assert.equal(check.status, 0, `${shell} -n: ${check.stderr}`);
    }
  });
});
