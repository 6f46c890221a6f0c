#!/usr/bin/env node
// The podplate command. Its TypeScript sources are bundled by esbuild (the compiler tsx itself uses) into
// node_modules/.cache/podplate/<install>-<fingerprint>/ and run from there: built again only when what the bundle is
// made of changes (about 0.1 s), reused otherwise. Measured against running them through tsx's loader, whose hooks
// thread keeps a V8 heap of its own for the life of the process, the server starts at 151-154 MB of RSS rather than
// 181-197 MB (docs/performance.md). Stack traces name the bundle's lines; NODE_OPTIONS=--enable-source-maps maps them
// back to src/ (at 6-12 MB more). Whenever the bundle can't be made (a read-only install, a full disk, a source that
// does not compile), it says why on stderr and runs the sources through tsx instead.
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = join(root, 'src/cli/main.ts');
const cache = join(root, 'node_modules/.cache/podplate');
/** Names this install's bundles, so that installs sharing one node_modules (a linked checkout) leave others' alone. */
const install = createHash('sha256').update(root).digest('hex').slice(0, 8);

/** The files esbuild may load from src/: a source edited, added or removed changes the fingerprint; editors' files don't. */
const SOURCE = /^[^.~#].*\.(?:[cm]?ts|[cm]?js|json)$/;

/**
 * A hash of what the bundle is made of: every source file under src/ (its path, size, modification and change times
 * and inode: an edit that keeps size and mtime still changes the ctime), package.json, tsconfig.json, this file and
 * the esbuild that builds it. A file that vanishes while it is walked (an editor's save) is passed over.
 */
function fingerprint() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const found of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, found.name);
      if (found.isDirectory() && !found.name.startsWith('.')) walk(path);
      else if (SOURCE.test(found.name)) {
        const stat = statSync(path, { throwIfNoEntry: false });
        if (stat) hash.update(`${relative(root, path)}\0${stat.size}\0${stat.mtimeMs}\0${stat.ctimeMs}\0${stat.ino}\n`);
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

/**
 * Bundles src/cli/main.ts into `dir` (its lazily loaded commands into chunks of their own; the packages stay imports),
 * with a list of its files and their sizes (MANIFEST) written last, so that a bundle damaged since is known.
 */
async function bundle(dir) {
  const esbuild = await import('esbuild');
  const building = mkdtempSync(`${dir}.tmp-`);
  try {
    const { metafile } = await esbuild.build({
      entryPoints: [entry],
      absWorkingDir: root,
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
      metafile: true,
      logLevel: 'silent',
      banner: { js: '// Built from src/ by bin/podplate.js; do not edit.' },
      plugins: [importMetaUrlOfSource],
    });
    const files = Object.fromEntries(
      Object.entries(metafile.outputs).map(([path, { bytes }]) => [relative(building, join(root, path)), bytes]),
    );
    writeFileSync(join(building, MANIFEST), JSON.stringify(files));
    // Readable by every user, as an install is: one warmed as root still serves the user the service runs as.
    chmodSync(building, 0o777 & ~process.umask());
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    // Another process built the same fingerprint first: use its bundle.
    if (!whole(dir)) throw error;
  } finally {
    await esbuild.stop();
  }
}

const MANIFEST = 'manifest.json';

/** Whether `dir` holds a bundle with every file its manifest lists, each of its size. */
function whole(dir) {
  try {
    const files = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8'));
    return Object.entries(files).every(([file, bytes]) => statSync(join(dir, file), { throwIfNoEntry: false })?.size === bytes);
  } catch {
    return false;
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

/** The bundle's entry, built first if need be; undefined (with a line on stderr saying why) when it can't be. */
async function bundled() {
  try {
    const dir = join(cache, `${install}-${fingerprint()}`);
    if (whole(dir)) {
      const now = new Date();
      try {
        utimesSync(dir, now, now); // marks it used, so that forgetUnused leaves it be
      } catch {}
    } else {
      mkdirSync(cache, { recursive: true });
      // A bundle damaged since it was built (a file lost or cut short) is moved out of the way, removed, built again.
      if (existsSync(dir)) {
        const damaged = `${dir}.tmp-damaged-${process.pid}`;
        try {
          renameSync(dir, damaged);
        } catch {}
        rmSync(damaged, { recursive: true, force: true });
      }
      await bundle(dir);
    }
    forgetUnused(dir);
    return join(dir, 'main.mjs');
  } catch (error) {
    const first = error?.errors?.[0];
    const more = error?.errors?.length > 1 ? ` (and ${error.errors.length - 1} more)` : '';
    const reason = first
      ? `${first.location ? `${first.location.file}:${first.location.line}: ` : ''}${first.text}${more}`
      : String(error?.message ?? error);
    process.stderr.write(
      `podplate: could not bundle the sources into ${cache} (${reason.replace(/\s+/g, ' ')}); running them through tsx\n`,
    );
    return undefined;
  }
}

/**
 * Removes bundles and unfinished builds that no process can still be starting from: this install's unused for an
 * hour, other installs' (sharing this node_modules) unused for 30 days.
 */
function forgetUnused(current) {
  const now = Date.now();
  let names = [];
  try {
    names = readdirSync(cache);
  } catch {}
  for (const name of names) {
    const path = join(cache, name);
    if (path === current) continue;
    try {
      const unusedFor = now - statSync(path).mtimeMs;
      if (unusedFor > (name.startsWith(`${install}-`) ? 3_600_000 : 30 * 86_400_000)) rmSync(path, { recursive: true, force: true });
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
