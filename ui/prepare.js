// npm runs this after `npm install` and `npm ci` (the `prepare` script): it builds the web UI into ui/dist, so that
// `npm start` serves it with no extra step. An install without devDependencies (`--omit=dev`) has no Vite: the UI is
// then left unbuilt (the server answers / with a page saying to run `npm run build:ui`) rather than failing the install.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

try {
  createRequire(import.meta.url).resolve('vite/package.json');
} catch {
  process.stderr.write('podplate: Vite is not installed (devDependencies omitted), so the web UI is not built.\n');
  process.exit(0);
}
const build = spawnSync('npm', ['run', 'build:ui'], { stdio: 'inherit' });
process.exit(build.status ?? 1);
