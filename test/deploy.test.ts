import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { ConfigSchema } from '../src/config.ts';
import { DIALECTS, startHarness } from './support/harness.ts';
import { freePort, startServer } from './support/process.ts';

// deploy/, each file checked by its own tool: the systemd unit by `systemd-analyze verify`, the alert rules by
// `promtool check rules` and their unit tests by `promtool test rules`. The Dockerfile can't be built here (no
// container engine): it is parsed and linted, what it copies and runs is checked to be in the repository, and its
// health check is run against a real server.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');

const run = (command: string, args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  return { code: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, error: r.error };
};

test('the systemd unit passes `systemd-analyze verify` without a warning, and runs the server itself as its own user', () => {
  const unit = readFileSync(join(DEPLOY, 'podplate.service'), 'utf8');
  // Installed in /opt/podplate; verified here with this checkout in its place, so the commands it runs exist.
  const dir = mkdtempSync(join(tmpdir(), 'podplate-unit-'));
  try {
    const file = join(dir, 'podplate.service');
    writeFileSync(file, unit.replaceAll('/opt/podplate', ROOT.replace(/\/$/, '')));
    const r = run('systemd-analyze', ['verify', file]);
    assert.equal(r.error, undefined, 'systemd-analyze is installed (.ci/run installs it)');
    assert.equal(r.code, 0, r.out);
    assert.equal(r.out, '', 'not a warning');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const setting = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(unit)?.[1];
  assert.equal(setting('ExecStart'), '/opt/podplate/node_modules/.bin/node /opt/podplate/bin/podplate.js serve');
  assert.ok(setting('User') && setting('User') !== 'root');
  const grace = (ConfigSchema.properties.SHUTDOWN_GRACE_SECONDS as { default: number }).default;
  assert.ok(Number(setting('TimeoutStopSec')) > grace, 'the stop timeout outlasts the grace period');
});

test('the alert rules pass `promtool check rules`, their unit tests pass, and every metric they name is served', async () => {
  const check = run('promtool', ['check', 'rules', join(DEPLOY, 'prometheus', 'alerts.yml')]);
  assert.equal(check.error, undefined, 'promtool is installed (.ci/run installs Debian’s prometheus)');
  assert.equal(check.code, 0, check.out);
  assert.match(check.out, /SUCCESS: \d+ rules found/);
  const unit = run('promtool', ['test', 'rules', join(DEPLOY, 'prometheus', 'alerts.test.yml')]);
  assert.equal(unit.code, 0, unit.out);
  assert.match(unit.out, /SUCCESS/);

  const rules = readFileSync(join(DEPLOY, 'prometheus', 'alerts.yml'), 'utf8');
  const named = new Set(rules.match(/\b(?:podplate|nodejs)_[a-z0-9_]+/g));
  const served = new Set<string>();
  for (const dialect of DIALECTS) {
    const h = await startHarness(dialect);
    try {
      const text = (await h.call('GET', '/metrics')).text;
      for (const [, name] of text.matchAll(/^# TYPE (\S+) /gm)) served.add(name as string);
    } finally {
      await h.close();
    }
  }
  const family = (name: string) => name.replace(/_(bucket|count|sum)$/, '');
  // The pool's metrics are PostgreSQL's: checked where it is.
  const expected = [...named].filter((name) => DIALECTS.includes('postgres') || !name.startsWith('podplate_db_pool_'));
  assert.deepEqual(
    expected.filter((name) => !served.has(family(name))),
    [],
    'every metric an alert names is one /metrics serves',
  );
});

test('the Dockerfile: lint-clean, on the official Node.js 24 image, a non-root user, a health check that works, only what the repository has', async () => {
  const text = readFileSync(join(DEPLOY, 'Dockerfile'), 'utf8');
  assert.deepEqual(
    validate(text).map((d) => `${d.range.start.line + 1}: ${d.message}`),
    [],
  );
  const dockerfile = DockerfileParser.parse(text);
  const instructions = dockerfile.getInstructions();
  const args = (i: Instruction) => i.getArguments().map((a) => a.getValue());

  const bases = dockerfile.getFROMs().map((from) => from.getImage());
  assert.ok(bases.length > 0);
  for (const base of bases) assert.match(base ?? '', /^node:24(-[a-z]+)*(-slim)?$/, 'the official Node.js 24 image');

  // The final stage runs as a user that is not root.
  const finalStage = instructions.slice(instructions.lastIndexOf(dockerfile.getFROMs().at(-1) as Instruction));
  const users = finalStage.filter((i) => i.getKeyword() === 'USER').map((i) => args(i)[0]);
  assert.ok(users.length > 0 && !['root', '0'].includes(users.at(-1) as string), `USER ${users.at(-1)}`);

  // Everything copied from the build context, and what runs, is in the repository.
  for (const copy of instructions.filter((i) => i.getKeyword() === 'COPY')) {
    if ((copy as Instruction & { getFromFlag(): unknown }).getFromFlag()) continue;
    for (const source of args(copy).slice(0, -1)) assert.ok(existsSync(join(ROOT, source)), `COPY ${source}: in the repository`);
  }
  const cmd = JSON.parse(dockerfile.getCMDs().at(-1)?.getArgumentsContent() ?? '[]') as string[];
  assert.deepEqual(cmd, ['node', 'bin/podplate.js', 'serve'], 'the server itself, not npm');
  assert.ok(existsSync(join(ROOT, cmd[1] as string)));
  const env = instructions.find((i) => i.getKeyword() === 'ENV' && /PORT=/.test(i.getArgumentsContent() ?? ''));
  const port = /PORT=(\d+)/.exec(env?.getArgumentsContent() ?? '')?.[1];
  assert.deepEqual(
    instructions.filter((i) => i.getKeyword() === 'EXPOSE').map((i) => args(i)[0]),
    [port],
  );
  assert.deepEqual(
    instructions.filter((i) => i.getKeyword() === 'STOPSIGNAL').map((i) => args(i)[0]),
    ['SIGTERM'],
  );

  // The health check, as the container runs it: exit 0 while the server answers, 1 when nothing does.
  const healthcheck = dockerfile.getHEALTHCHECKs().at(-1);
  const content = healthcheck?.getArgumentsContent() ?? '';
  const probe = JSON.parse(
    content
      .slice(content.indexOf('CMD') + 3)
      .replace(/\\\n/g, '')
      .trim(),
  ) as string[];
  assert.equal(probe[0], 'node');
  const db = mkdtempSync(join(tmpdir(), 'podplate-health-'));
  const server = await startServer({ DATABASE_URL: `sqlite:${join(db, 'podplate.db')}` });
  try {
    const healthy = run(process.execPath, probe.slice(1), { PORT: new URL(server.url).port });
    assert.equal(healthy.code, 0, healthy.out);
    const down = run(process.execPath, probe.slice(1), { PORT: String(await freePort()) });
    assert.equal(down.code, 1, down.out);
  } finally {
    await server.stop();
    rmSync(db, { recursive: true, force: true });
  }
});
