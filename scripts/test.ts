// The test tiers (npm test, npm run test:slow|chaos|fuzz), each a list of test files, in one place.
// `npm test` is what a person waits for: the domain, the store, and the HTTP API through the app in process, on every
// database. The slow tier starts processes (the podplate command, servers) and a browser, and runs the bench's smoke;
// the chaos tier kills processes and PostgreSQL's backends; the fuzz tier runs the property-based requests at length.
// Usage: node scripts/test.ts [fast|slow|chaos|fuzz] [more node --test flags]
import { spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';

/** Test files that start processes or a browser: the slow tier's. Every other file under test/ is the fast tier's. */
const SLOW = [
  'test/bench.test.ts',
  'test/cli.test.ts',
  'test/cli/*.test.ts',
  'test/images/{checks,pins,cli}.test.ts',
  'test/ui/{browser,browse,live,reading,secrets,images,daily}.test.ts',
  'test/secrets.test.ts',
  'test/server.test.ts',
  'test/shutdown.test.ts',
  'test/npm-start.test.ts',
  'test/upgrade.test.ts',
  'test/deploy.test.ts',
  'test/postgres/processes.test.ts',
  'test/releases/processes.test.ts',
  'test/client/client.test.ts',
  'test/store/file-modes.test.ts',
  'test/reliability/{freshness,keys,logs,secret-values}.test.ts',
  'test/transfer/{transfer,backup,import-indexes,files,move}.test.ts',
];
const CHAOS = ['test/chaos/*.test.ts'];
const FUZZ = ['test/reliability/fuzz.test.ts'];

const files = (patterns: string[]) => patterns.flatMap((pattern) => globSync(pattern)).sort();
const all = files(['test/**/*.test.ts']);
const slow = new Set(files(SLOW));
const chaos = new Set(files(CHAOS));

const [tier = 'fast', ...flags] = process.argv.slice(2);
const TIERS: Record<string, { files: string[]; concurrency: number; env?: Record<string, string> }> = {
  fast: { files: all.filter((file) => !slow.has(file) && !chaos.has(file)), concurrency: 2 },
  slow: { files: [...slow], concurrency: 1 },
  chaos: { files: [...chaos], concurrency: 1 },
  fuzz: { files: files(FUZZ), concurrency: 1, env: { FUZZ_RUNS: process.env.FUZZ_RUNS ?? '50000' } },
};
const chosen = TIERS[tier];
if (!chosen) {
  process.stderr.write(`scripts/test.ts: the tiers are ${Object.keys(TIERS).join(', ')}, not ${tier}\n`);
  process.exit(2);
}
const run = spawnSync(process.execPath, ['--test', `--test-concurrency=${chosen.concurrency}`, ...flags, ...chosen.files], {
  stdio: 'inherit',
  env: { ...process.env, NODE_COMPILE_CACHE: 'node_modules/.cache/podplate-compile', ...chosen.env },
});
process.exitCode = run.status ?? 1;
