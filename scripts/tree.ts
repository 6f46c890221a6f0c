// Keeps stray files out of the tree (npm run lint): at the root, only what a newcomer needs; nothing committed or
// left untracked there but the entries below. An experiment belongs in a folder that git ignores, or in /tmp.
import { execFileSync } from 'node:child_process';

const ROOT_ENTRIES = new Set([
  '.ci',
  '.gitignore',
  '.node-version',
  '.spectral.yaml',
  'README.md',
  'bench',
  'bin',
  'biome.json',
  'deploy',
  'docs',
  'openapi',
  'package-lock.json',
  'package.json',
  'redocly.yaml',
  'scripts',
  'src',
  'test',
  'tsconfig.json',
  'ui',
]);

// Committed files, and untracked ones that .gitignore does not keep out.
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8' }).split('\n');
const stray = [...new Set(files.filter(Boolean).map((file) => file.split('/')[0] as string))].filter((entry) => !ROOT_ENTRIES.has(entry));
if (stray.length > 0) {
  process.stderr.write(
    `Stray files at the root of the tree: ${stray.join(', ')}. Delete them, move them where they belong, or (if a newcomer needs them) list them in scripts/tree.ts.\n`,
  );
  process.exitCode = 1;
}
