import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const UI = fileURLToPath(new URL('../../ui/', import.meta.url));
/** Server code the UI bundles too (the token formats it masks). */
const SHARED = [fileURLToPath(new URL('../../src/domain/token-formats.ts', import.meta.url))];

function newest(dir: string): number {
  let latest = 0;
  for (const name of readdirSync(dir)) {
    if (name === 'dist') continue;
    const path = join(dir, name);
    const stat = statSync(path);
    latest = Math.max(latest, stat.isDirectory() ? newest(path) : stat.mtimeMs);
  }
  return latest;
}

/** Builds the UI (npm run build:ui) when ui/dist is missing or older than its sources, so tests never see a stale one. */
export function ensureUiBuilt(): void {
  const index = join(UI, 'dist', 'index.html');
  const sources = Math.max(newest(UI), ...SHARED.map((file) => statSync(file).mtimeMs));
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const build = spawnSync('npm', ['run', 'build:ui'], { cwd: join(UI, '..'), encoding: 'utf8', timeout: 120_000 });
  if (build.status !== 0) throw new Error(`npm run build:ui failed:\n${build.stdout}\n${build.stderr}`);
}
