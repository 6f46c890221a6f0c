#!/usr/bin/env node
// The podplate command. Its TypeScript sources are bundled by esbuild (the compiler tsx itself uses) into
// node_modules/.cache/podplate/<fingerprint>/ and run from there: built again only when a file under src/ or
// package.json changes (about 0.2 s), reused otherwise. Measured against running them through tsx's loader, whose
// hooks thread keeps a V8 heap of its own for the life of the process, the server starts at 154 MB of RSS rather
// than 197 MB (docs/performance.md). Stack traces name the bundle's lines; NODE_OPTIONS=--enable-source-maps maps
// them back to src/ (at 24 MB more). Where the cache can't be written (a read-only install), it runs through tsx.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = join(root, 'src/cli/main.ts');

/** A hash of what the bundle is made of: every file under src/, its size and modification time, and package.json. */
function fingerprint() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        const { size, mtimeMs } = statSync(path);
        hash.update(`${relative(root, path)}\0${size}\0${mtimeMs}\n`);
      }
    }
  };
  walk(join(root, 'src'));
  hash.update(`${root}\n`);
  hash.update(readFileSync(join(root, 'package.json')));
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  return hash.digest('hex').slice(0, 16);
}

/** Bundles src/cli/main.ts into `dir` (its lazily loaded commands into chunks of their own); the packages stay imports. */
async function bundle(dir) {
  const esbuild = await import('esbuild');
  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  try {
    await esbuild.build({
      entryPoints: [entry],
      outdir: building,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      sourcemap: 'linked',
      sourcesContent: false,
      logLevel: 'error',
      banner: { js: '// Built from src/ by bin/podplate.js; do not edit.' },
      plugins: [importMetaUrlOfSource],
    });
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  } finally {
    await esbuild.stop();
  }
  try {
    renameSync(building, dir);
  } catch (error) {
    // Another process built the same fingerprint first: use its bundle.
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(dir, 'main.js'))) throw error;
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

async function load() {
  const cache = join(root, 'node_modules/.cache/podplate');
  try {
    const dir = join(cache, fingerprint());
    if (!existsSync(join(dir, 'main.js'))) {
      mkdirSync(cache, { recursive: true });
      await bundle(dir);
      forgetOld(cache, dir);
    }
    return await import(pathToFileURL(join(dir, 'main.js')).href);
  } catch (error) {
    if (!['EACCES', 'EROFS', 'EPERM', 'ERR_MODULE_NOT_FOUND'].includes(error?.code)) throw error;
    const { register } = await import('tsx/esm/api');
    register();
    return await import(pathToFileURL(entry).href);
  }
}

/** Removes bundles of earlier sources, once no process can still be starting from them (an hour on). */
function forgetOld(cache, current) {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path === current) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true });
    } catch {}
  }
}

const { main } = await load();
process.exitCode = await main(process.argv.slice(2));
