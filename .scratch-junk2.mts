import { spawn, execFileSync } from 'node:child_process';
const env = { ...process.env, DATABASE_URL: `sqlite:/tmp/junk-${Date.now()}.db`, PORT: '18200', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' };
const key = execFileSync(process.execPath, ['bin/podplate.js', 'keys', 'create', '--user', 'j'], { env }).toString().trim();
const child = spawn(process.execPath, ['bin/podplate.js', 'serve'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
for (;;) { try { if ((await fetch('http://127.0.0.1:18200/healthz')).ok) break; } catch {} await new Promise((r) => setTimeout(r, 100)); }
const JUNK = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i.toString(36)}":1`).join(',')}}`;
const statuses: Record<number, number> = {};
const times: number[] = [];
for (let i = 0; i < 50; i++) {
  const t = performance.now();
  const r = await fetch('http://127.0.0.1:18200/v1/templates', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JUNK });
  await r.text();
  times.push(performance.now() - t);
  statuses[r.status] = (statuses[r.status] ?? 0) + 1;
}
times.sort((a, b) => a - b);
console.log(statuses, 'p50', times[25].toFixed(1), 'p90', times[45].toFixed(1), 'max', times[49].toFixed(1));
child.kill('SIGTERM');
