// Lints the published document (openapi/podplate.json) with Redocly's rules as redocly.yaml sets them (its stock
// `recommended`): every problem, warning or error, is printed and fails the lint. Redocly itself exits 0 on warnings.
import { spawnSync } from 'node:child_process';

const run = spawnSync('redocly', ['lint', 'openapi/podplate.json', '--format=json'], {
  encoding: 'utf8',
  env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
});
interface Problem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer?: string }[];
}
let report: { totals: { errors: number; warnings: number }; problems: Problem[] };
try {
  report = JSON.parse(run.stdout);
} catch {
  process.stderr.write(`redocly lint did not run: ${run.stderr || run.error?.message}\n`);
  process.exit(1);
}
for (const p of report.problems) process.stderr.write(`${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? ''})\n`);
const { errors, warnings } = report.totals;
process.stderr.write(`Redocly (recommended): ${errors} errors, ${warnings} warnings.\n`);
if (errors + warnings > 0 || run.status !== 0) process.exitCode = 1;
