#!/usr/bin/env node
// The podplate command. Its TypeScript sources are bundled by esbuild (the compiler tsx itself uses) into
// node_modules/.cache/podplate/<install>-<fingerprint>/ and run from there: built again only when what the bundle is
// made of changes (about 0.2 s), reused otherwise. Measured against running them through tsx's loader, whose hooks
// thread keeps a V8 heap of its own for the life of the process, the server starts at 154 MB of RSS rather than
// 197 MB (docs/performance.md). Stack traces name the bundle's lines; NODE_OPTIONS=--enable-source-maps maps them
// back to src/ (at 24 MB more). Whenever the bundle can't be made (a read-only install, a full disk, a source that
// does not compile), it says why on stderr and runs the sources through tsx instead.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = join(root, 'src/cli/main.ts');
const cache = join(root, 'node_modules/.cache/podplate');
/** Names this install's bundles, so that installs sharing one node_modules (a linked checkout) leave others' alone. */
const install = createHash('sha256').update(root).digest('hex').slice(0, 8);

/**
 * A hash of what the bundle is made of: every file under src/ (its path, size and modification time), package.json,
 * tsconfig.json, this file and the esbuild that builds it.
 */
function fingerprint() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const found of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, found.name);
      if (found.isDirectory()) walk(path);
      else {
        const { size, mtimeMs } = statSync(path);
        hash.update(`${relative(root, path)}\0${size}\0${mtimeMs}\n`);
      }
    }
  };
  walk(join(root, 'src'));
  for (const file of ['package.json', 'tsconfig.json', 'node_modules/esbuild/package.json']) {
    const path = join(root, file);
    hash.update(`${file}\0${existsSync(path) ? readFileSync(path, 'utf8') : ''}\n`);
  }
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  return hash.digest('hex').slice(0, 16);
}

/** Bundles src/cli/main.ts into `dir` (its lazily loaded commands into chunks of their own); the packages stay imports. */
async function bundle(dir) {
  const esbuild = await import('esbuild');
  const building = mkdtempSync(`${dir}.tmp-`);
  try {
    await esbuild.build({
      entryPoints: [entry],
      outdir: building,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      sourcemap: 'linked',
      sourcesContent: false,
      logLevel: 'silent',
      banner: { js: '// Built from src/ by bin/podplate.js; do not edit.' },
      plugins: [importMetaUrlOfSource],
    });
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    // Another process built the same fingerprint first: use its bundle.
    if (!existsSync(join(dir, 'main.mjs'))) throw error;
  } finally {
    await esbuild.stop();
  }
}

/** A module that finds files beside it (the web UI's, from src/http) keeps seeing its own place, not the bundle's. */
const importMetaUrlOfSource = {
  name: 'import-meta-url-of-source',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
      loader: 'ts',
    }));
  },
};

/** The bundle's entry, built first if need be; undefined (with a word on stderr) when it can't be. */
async function bundled() {
  const dir = join(cache, `${install}-${fingerprint()}`);
  const main = join(dir, 'main.mjs');
  try {
    if (existsSync(main)) {
      const now = new Date();
      try {
        utimesSync(dir, now, now); // marks it used, so that forgetUnused leaves it be
      } catch {}
    } else {
      mkdirSync(cache, { recursive: true });
      await bundle(dir);
      forgetUnused(dir);
    }
    return main;
  } catch (error) {
    const where = error?.errors?.[0]?.location;
    const reason = where ? `${where.file}:${where.line}: ${error.errors[0].text}` : (error?.message ?? String(error));
    process.stderr.write(`podplate: could not bundle the sources into ${cache} (${reason}); running them through tsx\n`);
    return undefined;
  }
}

/** Removes this install's bundles of earlier sources once unused for an hour (no process can still be starting them). */
function forgetUnused(current) {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path === current || !name.startsWith(`${install}-`)) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true });
    } catch {}
  }
}

async function load() {
  const main = await bundled();
  if (main) return await import(pathToFileURL(main).href);
  const { register } = await import('tsx/esm/api');
  register();
  return await import(pathToFileURL(entry).href);
}

const { main } = await load();
process.exitCode = await main(process.argv.slice(2));
