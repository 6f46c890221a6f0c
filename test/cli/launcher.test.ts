import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freshDatabase } from '../support/harness.ts';
import { startServer } from '../support/process.ts';

// bin/podplate.js runs src/ bundled by esbuild, from a cache keyed by what src/ and package.json hold, and runs the
// sources through tsx (saying why) whenever it can't bundle them.

const root = fileURLToPath(new URL('../..', import.meta.url));
const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const fallback = /podplate: could not bundle the sources into .*; running them through tsx/;

/** Runs `work` on a copy of the package (below), removed after. */
function withCopy(work: (copy: ReturnType<typeof copyOfPackage>) => void): void {
  const copy = copyOfPackage();
  try {
    work(copy);
  } finally {
    rmSync(copy.dir, { recursive: true, force: true });
  }
}

/**
 * A copy of the package (bin, src, package.json, tsconfig.json) that a test may change, with a node_modules of its
 * own whose entries link to this one's, so that its bundle cache (node_modules/.cache) is its own too.
 */
function copyOfPackage() {
  const dir = mkdtempSync(join(tmpdir(), 'podplate-launcher-'));
  for (const part of ['bin', 'src', 'package.json', 'tsconfig.json']) cpSync(join(root, part), join(dir, part), { recursive: true });
  mkdirSync(join(dir, 'node_modules'));
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (name !== '.cache') symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name));
  }
  const cache = join(dir, 'node_modules/.cache/podplate');
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [join(dir, 'bin/podplate.js'), ...args], { encoding: 'utf8', timeout: 60_000 });
  /** The cache's bundles, each with the inode of its entry (the same inode: the same bundle, not built again). */
  const bundles = () =>
    Object.fromEntries(
      readdirSync(cache).map((name) => [name, existsSync(join(cache, name, 'main.mjs')) ? statSync(join(cache, name, 'main.mjs')).ino : 0]),
    );
  const edit = (file: string, change: (text: string) => string) =>
    writeFileSync(join(dir, file), change(readFileSync(join(dir, file), 'utf8')));
  /** `podplate --version`, which must succeed and say nothing on stderr (it ran from a bundle): what it printed. */
  const quietVersion = () => {
    const r = run('--version');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '', 'nothing on stderr: the bundle was used');
    return r.stdout.trim();
  };
  return { dir, cache, run, bundles, edit, quietVersion };
}

test('the command runs its bundle, reused while nothing changes, built again when a source file or package.json does', () =>
  withCopy((copy) => {
    assert.equal(copy.quietVersion(), version, 'built, and nothing said');
    const built = copy.bundles();
    assert.equal(Object.keys(built).length, 1, 'one bundle');
    assert.ok(Object.values(built)[0], 'the bundle has its entry');

    assert.equal(copy.quietVersion(), version);
    assert.deepEqual(copy.bundles(), built, 'an unchanged package reuses its bundle');

    const main = 'src/cli/main.ts';
    copy.edit(main, (text) => text.replace(".version(pkg.version, '-V, --version'", ".version('changed-in-src', '-V, --version'"));
    assert.equal(copy.quietVersion(), 'changed-in-src', 'a changed source file is bundled again');

    copy.edit('package.json', (text) => text.replace(/"version": "[^"]+"/, '"version": "9.9.9"'));
    copy.edit(main, (text) => text.replace("'changed-in-src'", 'pkg.version'));
    assert.equal(copy.quietVersion(), '9.9.9', 'a changed package.json is bundled again');
    assert.equal(Object.keys(copy.bundles()).length, 3, 'bundles in use within the hour are kept');
  }));

test("editors' files in src/, a dangling link among them, neither stop the command nor build it again", () =>
  withCopy((copy) => {
    copy.quietVersion();
    const built = copy.bundles();
    symlinkSync('user@host.12345:1700000000', join(copy.dir, 'src/cli/.#main.ts')); // Emacs's lock of an unsaved buffer
    writeFileSync(join(copy.dir, 'src/cli/.main.ts.swp'), 'vim');
    writeFileSync(join(copy.dir, 'src/cli/main.ts~'), 'a backup');
    assert.equal(copy.quietVersion(), version);
    assert.deepEqual(copy.bundles(), built);
  }));

test('a bundle damaged since it was built (a file gone) is built again; every user of the install may read it', () =>
  withCopy((copy) => {
    copy.quietVersion();
    const [name] = Object.keys(copy.bundles());
    const dir = join(copy.cache, name as string);
    assert.equal(statSync(dir).mode & 0o777, 0o777 & ~process.umask(), 'the mode an install would have');
    const chunk = readdirSync(dir).find((file) => file.startsWith('admin-') && file.endsWith('.mjs'));
    assert.ok(chunk, 'the admin commands are a chunk of their own');
    rmSync(join(dir, chunk));
    assert.equal(copy.quietVersion(), version);
    assert.ok(existsSync(join(dir, chunk)), 'the chunk is back');
    assert.deepEqual(Object.keys(copy.bundles()), [name], 'nothing else is left');
  }));

test('a source that does not compile is named, and leaves no half-built bundle', () =>
  withCopy((copy) => {
    copy.edit('src/cli/main.ts', (text) => `${text}\nthis is not TypeScript(\n`);
    const broken = copy.run('--version');
    assert.notEqual(broken.status, 0);
    assert.match(broken.stderr, fallback);
    assert.match(broken.stderr, /src\/cli\/main\.ts:\d+: /, 'the bundler names the file and line');
    assert.deepEqual(copy.bundles(), {}, 'no bundle, whole or half-built, is left');
  }));

test('where the cache cannot be written, the command says so and runs the sources through tsx', () =>
  withCopy((copy) => {
    writeFileSync(join(copy.dir, 'node_modules/.cache'), 'a file where the cache would go');
    const run = copy.run('--version');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), version);
    assert.match(run.stderr, fallback);
  }));

test('the bundled server finds the web UI beside its sources, not beside the bundle', async () => {
  assert.ok(existsSync(join(root, 'ui/dist/index.html')), 'npm install builds the web UI');
  const db = await freshDatabase('sqlite');
  try {
    const server = await startServer({ DATABASE_URL: db.url });
    const page = await fetch(`${server.url}/`);
    assert.equal(page.status, 200);
    assert.equal(await page.text(), readFileSync(join(root, 'ui/dist/index.html'), 'utf8'));
    await server.stop();
    assert.doesNotMatch(server.stderr(), fallback, 'the server ran from its bundle');
  } finally {
    await db.drop();
  }
});
