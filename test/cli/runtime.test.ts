import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freshDatabase } from '../support/harness.ts';
import { startServer } from '../support/process.ts';

// Podplate runs on the Node.js 24 that `npm install` puts in node_modules/.bin (the "node" dependency), which runs
// src/ as it is: no bundle, no loader; Node's own compile cache keeps the stripped sources between starts.

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

test('npm scripts and the tests run the Node.js 24 of the "node" dependency', () => {
  assert.equal(process.versions.node.split('.')[0], '24');
  assert.match(pkg.dependencies.node, /^\^24\./);
  assert.match(pkg.engines.node, /^>=24/);
  assert.equal(readFileSync(join(root, '.node-version'), 'utf8').trim(), '24');
});

test('started by an older Node.js, the command says in one line which it needs and how to run it, and exits 1', (t) => {
  const older = ['/usr/bin/node', '/usr/local/bin/node'].find(
    (path) => existsSync(path) && Number(spawnSync(path, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout) < 24,
  );
  if (!older) return t.skip('no Node.js older than 24 on this machine');
  const run = spawnSync(older, [join(root, 'bin/podplate.js'), '--version'], { encoding: 'utf8' });
  assert.equal(run.status, 1);
  assert.equal(run.stdout, '');
  assert.match(
    run.stderr,
    /^podplate: needs Node\.js 24 or later, and this is Node\.js \d+\.\d+\.\d+; run it through npm \(npm start, npx podplate \.\.\.\)[^\n]*\n$/,
  );
});

/** `podplate --version` with Node's compile cache left to the command (not set by the environment, as npm test sets it). */
function version() {
  const { NODE_COMPILE_CACHE: _, ...env } = process.env;
  const run = spawnSync(process.execPath, [join(root, 'bin/podplate.js'), '--version'], { encoding: 'utf8', env });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), pkg.version);
  assert.equal(run.stderr, '', 'no warning (type stripping is not experimental on Node.js 24)');
}

test("the command runs its TypeScript sources as they are, with Node's compile cache in a folder no other user may write", () => {
  version();
  assert.equal(existsSync(join(root, 'node_modules/.cache/podplate')), false, 'no bundle');
  const cache = join(root, 'node_modules/.cache/podplate-compile');
  assert.equal(statSync(cache).mode & 0o022, 0, 'not writable by the group or others');
  assert.ok(readdirSync(cache).length > 0, 'the compile cache was written');
});

test('a compile cache folder that other users may write to is not used: what it holds would be run', () => {
  const cache = join(root, 'node_modules/.cache/podplate-compile');
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { mode: 0o700 });
  chmodSync(cache, 0o777);
  try {
    version();
    assert.deepEqual(readdirSync(cache), []);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('production installs carry no build tools: tsx and esbuild are not dependencies', () => {
  for (const name of ['tsx', 'esbuild', 'typescript']) assert.equal(pkg.dependencies[name], undefined, name);
});

test('the server serves the web UI built by npm install', async () => {
  assert.ok(existsSync(join(root, 'ui/dist/index.html')), 'npm install builds the web UI');
  const db = await freshDatabase('sqlite');
  try {
    const server = await startServer({ DATABASE_URL: db.url });
    const page = await fetch(`${server.url}/`);
    assert.equal(page.status, 200);
    assert.equal(await page.text(), readFileSync(join(root, 'ui/dist/index.html'), 'utf8'));
    await server.stop();
  } finally {
    await db.drop();
  }
});
