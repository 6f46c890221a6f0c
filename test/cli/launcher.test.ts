import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freshDatabase } from '../support/harness.ts';
import { startServer } from '../support/process.ts';

// bin/podplate.js runs src/ bundled by esbuild, from a cache keyed by what src/ and package.json hold.

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A copy of the package (bin, src, package.json; node_modules linked) that a test may change. */
function copyOfPackage() {
  const dir = mkdtempSync(join(tmpdir(), 'podplate-launcher-'));
  for (const part of ['bin', 'src', 'package.json']) cpSync(join(root, part), join(dir, part), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [join(dir, 'bin/podplate.js'), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { dir, run, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

test('the command runs its bundle, built again when a source file or package.json changes', () => {
  const copy = copyOfPackage();
  const bundles = () => new Set(readdirSync(join(root, 'node_modules/.cache/podplate')));
  try {
    const first = copy.run('--version');
    assert.equal(first.status, 0, first.stderr);
    assert.equal(first.stdout.trim(), JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
    const before = bundles();

    const again = copy.run('--version');
    assert.equal(again.stdout, first.stdout);
    assert.deepEqual(bundles(), before, 'an unchanged package reuses its bundle');

    const main = join(copy.dir, 'src/cli/main.ts');
    writeFileSync(
      main,
      readFileSync(main, 'utf8').replace(".version(pkg.version, '-V, --version'", ".version('changed-in-src', '-V, --version'"),
    );
    assert.equal(copy.run('--version').stdout.trim(), 'changed-in-src', 'a changed source file is bundled again');

    const pkg = join(copy.dir, 'package.json');
    writeFileSync(pkg, readFileSync(pkg, 'utf8').replace(/"version": "[^"]+"/, '"version": "9.9.9"'));
    writeFileSync(main, readFileSync(main, 'utf8').replace("'changed-in-src'", 'pkg.version'));
    assert.equal(copy.run('--version').stdout.trim(), '9.9.9', 'a changed package.json is bundled again');

    writeFileSync(main, `${readFileSync(main, 'utf8')}\nthis is not TypeScript(\n`);
    const broken = copy.run('--version');
    assert.notEqual(broken.status, 0);
    assert.match(broken.stderr, /main\.ts/, 'a source that does not compile is named');
    const leftovers = readdirSync(join(root, 'node_modules/.cache/podplate')).filter((name) => name.endsWith('.tmp'));
    assert.deepEqual(leftovers, [], 'a failed build leaves no half-built bundle');
  } finally {
    copy.remove();
  }
});

test('the bundled server finds the web UI beside its sources, not beside the bundle', async () => {
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
