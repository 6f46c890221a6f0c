#!/usr/bin/env node
// The podplate command. Node 24 runs its TypeScript sources as they are (type stripping): nothing is built first.
// Nothing is imported before the version check, so that an older Node.js reaches it.
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  process.stderr.write(
    `podplate: needs Node.js 24 or later, and this is Node.js ${process.versions.node}; run it through npm (npm start, npx podplate ...), which uses the Node.js 24 that npm install put in node_modules/.bin\n`,
  );
  process.exit(1);
}

/**
 * Node's own compile cache keeps the sources' stripped text and compiled code between starts (a start takes 0.1 s
 * rather than 0.17, and the server starts 45 MB smaller: docs/performance.md). It is used only from a folder of this
 * user's that nobody else may write to, since what it holds is run; otherwise every start strips the sources afresh.
 */
async function useCompileCache() {
  const { mkdirSync, statSync } = await import('node:fs');
  const { enableCompileCache } = await import('node:module');
  const { fileURLToPath } = await import('node:url');
  const dir = new URL('../node_modules/.cache/podplate-compile', import.meta.url);
  try {
    mkdirSync(new URL('.', dir), { recursive: true });
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const { uid, mode } = statSync(dir);
    if (uid === process.getuid?.() && (mode & 0o022) === 0) enableCompileCache(fileURLToPath(dir));
  } catch {}
}
if (!process.env.NODE_COMPILE_CACHE) await useCompileCache();

const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
