import { TERMS } from './catalogue.ts';
import type { Fairness } from './fairness.ts';
import type { Figures } from './load.ts';
import type { Delivery } from './outbox.ts';
import { SEARCH_CLIENTS } from './search.ts';
import { CONNECTIONS, SETTINGS, SMALL } from './settings.ts';

// What a run measured, and the targets it is judged by.

export interface Row extends Omit<Figures, 'serverErrors'> {
  dialect: string;
  templates: number;
  /** 5xx answers among `errors`, where counted. */
  serverErrors?: number;
  /** Requests per second over the ceiling's. */
  ratio?: number;
  /** The ceiling's CPU per request over this one's: 1 is the bare framework's cost, 0.7 costs 1.43 times as much. */
  cpuRatio?: number;
}

/** An export or import of a whole install: its wall time (process start to exit) and its own rate. */
export interface Transfer {
  name: 'export' | 'import';
  dialect: string;
  templates: number;
  rows: number;
  seconds: number;
  templatesPerSecond: number;
  peakRssMb: number;
}

export const rows: Row[] = [];
export const transfers: Transfer[] = [];
export const deliveries: Delivery[] = [];
export const fairnessFigures: Fairness[] = [];
/** Peak RSS of the scale run's server, by database. */
export const peakRss: Record<string, number> = {};
/** Peak RSS once four clients have read pages of large templates at once, by database. */
export const pagesRss: Record<string, number> = {};
/** Seconds the scale run's catalogue took to seed, by database. */
export const seedSeconds: Record<string, number> = {};

const find = (name: string, dialect: string, templates = SMALL) =>
  rows.find((r) => r.name.startsWith(name) && r.dialect === dialect && r.templates === templates);

export function targets() {
  const out: { target: string; value: string; met: boolean }[] = [];
  const add = (target: string, value: number | undefined, met: (v: number) => boolean, unit = '') => {
    if (value !== undefined) out.push({ target, value: `${value.toFixed(unit === '' ? 2 : 0)}${unit}`, met: met(value) });
  };
  const large = SETTINGS.large;
  // By CPU per request: the server's own cost, whatever the generator could do (the rate's ratio is beside it).
  for (const [d, label] of [
    ['sqlite', 'SQLite'],
    ['postgres', 'PostgreSQL'],
  ] as const) {
    const row = find('GET /v1/templates/{id}', d);
    add(`GET by id, ${label}: CPU per request <= 1.43 x the ceiling's (ratio >= 0.7)`, row?.cpuRatio, (v) => v >= 0.7);
    if (row && disagree(row))
      out.push({
        target: `GET by id, ${label}: the rate and CPU ratios agree within 10 %`,
        value: `${row.ratio?.toFixed(2)} / ${row.cpuRatio?.toFixed(2)}`,
        met: false,
      });
  }
  for (const d of ['sqlite', 'postgres'])
    add(`GET by id p99 <= 20 ms at ${CONNECTIONS} connections (${d})`, find('GET /v1/templates/{id}', d)?.p99, (v) => v <= 20, ' ms');
  add('create, SQLite >= 3,000/s', find('POST /v1/templates (', 'sqlite')?.rps, (v) => v >= 3000, '/s');
  add('update, SQLite >= 3,000/s', find('POST /v1/templates/{id}/update', 'sqlite')?.rps, (v) => v >= 3000, '/s');
  for (const d of SETTINGS.dialects) {
    for (const name of ['GET /v1/templates/{id}', 'GET /v1/templates (page']) {
      const small = find(name, d)?.rps;
      const scaled = find(name, d, large)?.rps;
      if (small && scaled)
        add(`${name.replace(' (page', ' page')} at ${large.toLocaleString('en')} keeps >= 85 % (${d})`, scaled / small, (v) => v >= 0.85);
    }
    add(`peak RSS <= 300 MB (${d})`, peakRss[d], (v) => v <= 300, ' MB');
    // What compression costs the server per request, and what it saves on the wire, on a page of 100 templates.
    const plain = find('GET /v1/templates (page', d);
    for (const encoding of ['gzip', 'br']) {
      const compressed = find(`compressed: GET /v1/templates (page of 100), ${encoding}`, d);
      if (!plain?.cpuUs || !plain.bytesPerRequest || !compressed?.cpuUs || !compressed.bytesPerRequest) continue;
      add(`${encoding}: server CPU per page of 100 <= 2 x plain's (${d})`, compressed.cpuUs / plain.cpuUs, (v) => v <= 2);
      add(
        `${encoding}: bytes per page of 100 <= 0.2 x plain's (${d})`,
        compressed.bytesPerRequest / plain.bytesPerRequest,
        (v) => v <= 0.2,
      );
    }
    add(`junk body refused: p99 <= 25 ms (${d})`, find('POST junk body', d)?.p99, (v) => v <= 25, ' ms');
    add(
      `4 pages of large templates: another tenant's p99 <= 1,000 ms (${d})`,
      find('GET /v1/templates/{id} of another', d, SETTINGS.largeTemplates)?.p99,
      (v) => v <= 1000,
      ' ms',
    );
    add(`4 pages of large templates: peak RSS <= 600 MB (${d})`, pagesRss[d], (v) => v <= 600, ' MB');
    // Issue #19's search targets, at the scale run's size.
    for (const term of Object.values(TERMS))
      add(
        `search "${term}" p99 <= 50 ms, 1 client, ${large.toLocaleString('en')} (${d})`,
        find(`search "${term}" (`, d, large)?.p99,
        (v) => v <= 50,
        ' ms',
      );
    const reading = find('GET /v1/templates/{id}, 50 connections, while', d, large);
    const searching = find(`search "${TERMS.rare}", ${SEARCH_CLIENTS} clients`, d, large);
    add(`GET by id p99 <= 20 ms while ${SEARCH_CLIENTS} clients search (${d})`, reading?.p99, (v) => v <= 20, ' ms');
    if (reading && searching)
      add(
        `no 5xx: GET by id and searches meanwhile (${d})`,
        (reading.serverErrors ?? 0) + (searching.serverErrors ?? 0),
        (v) => v === 0,
        ' 5xx',
      );
    const pages = rows.filter((r) => r.name.startsWith('sparse filter') && r.dialect === d && r.templates === large);
    const [first, deep] = pages;
    if (first && deep)
      add(`sparse filter: ${/page \d+/.exec(deep.name)?.[0]} p50 <= 2 x page 1's (${d})`, deep.p50 / first.p50, (v) => v <= 2);
    const [none, full] = deliveries.filter((r) => r.dialect === d);
    if (none && full)
      add(
        `outbox delivery with ${full.delivered.toLocaleString('en')} delivered rows >= 0.8 x with ${none.delivered} (${d})`,
        full.rate / none.rate,
        (v) => v >= 0.8,
      );
  }
  for (const f of fairnessFigures) {
    add(
      `another tenant's small writes under ~800 KB updates on 8 connections: p50 <= 50 ms (${f.dialect})`,
      f.writes.p50,
      (v) => v <= 50,
      ' ms',
    );
    add(
      `another tenant's webhook behind 90 large releases: within 1 s of its time alone (${f.dialect})`,
      f.delivery.behindMs - f.delivery.aloneMs,
      (v) => v <= 1000,
      ' ms',
    );
  }
  for (const t of transfers) {
    const floor = t.name === 'export' ? 20_000 : 10_000;
    add(`${t.name} ${t.dialect} >= ${floor.toLocaleString('en')} templates/s`, t.templatesPerSecond, (v) => v >= floor, '/s');
    add(`${t.name} ${t.dialect}: peak RSS <= 300 MB (bounded, whatever the install's size)`, t.peakRssMb, (v) => v <= 300, ' MB');
  }
  return out;
}

/** Whether a row's two ratios disagree by more than 10 %: a run bound by its generator, or a server left idle. */
export const disagree = (r: Row) => r.ratio !== undefined && r.cpuRatio !== undefined && Math.abs(r.ratio - r.cpuRatio) / r.cpuRatio > 0.1;

export function table(): string {
  const lines = [
    '| scenario | database | templates | requests/s | p50 ms | p99 ms | errors | server CPU µs/request | × ceiling (rate) | × ceiling (CPU) | KB/request |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.dialect} | ${r.templates.toLocaleString('en')} | ${Math.round(r.rps).toLocaleString('en')} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.cpuUs?.toFixed(1) ?? '-'} | ${r.ratio?.toFixed(2) ?? '-'} | ${r.cpuRatio?.toFixed(2) ?? '-'}${disagree(r) ? ' (!)' : ''} | ${r.bytesPerRequest === undefined ? '-' : (r.bytesPerRequest / 1024).toFixed(1)} |`,
    ),
    '',
    '(!): the rate and CPU ratios disagree by more than 10 %: the server was not saturated, or the generator was the limit.',
    '',
    '| outbox delivery | database | delivered rows present | events per round | events/s (median of rounds) | rounds |',
    '|---|---|---:|---:|---:|---|',
    ...deliveries.map(
      (d) =>
        `| enqueued to acknowledged | ${d.dialect} | ${d.delivered.toLocaleString('en')} | ${d.events.toLocaleString('en')} | ${Math.round(d.rate).toLocaleString('en')} | ${d.rates.map((r) => Math.round(r)).join(', ')} |`,
    ),
    '',
    '| fairness | database | another tenant alone | meanwhile | the heavy tenant |',
    '|---|---|---:|---:|---|',
    ...fairnessFigures.flatMap((f) => [
      `| small writes (p50 / p99 ms) while ~800 KB updates come on 8 connections | ${f.dialect} | ${f.writes.aloneP50} / ${f.writes.aloneP99} | ${f.writes.p50} / ${f.writes.p99} | ${f.writes.heavyAccepted.toFixed(1)}/s accepted, ${f.writes.heavyRefused.toFixed(1)}/s refused (429) |`,
      `| a webhook (ms from the update) behind ${f.delivery.backlog} large releases | ${f.dialect} | ${f.delivery.aloneMs} | ${f.delivery.behindMs} | ${f.delivery.backlog} releases on 30 endpoints |`,
    ]),
    '',
    '| move | database | templates | rows | seconds | templates/s | peak RSS MB |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...transfers.map(
      (t) =>
        `| ${t.name} | ${t.dialect} | ${t.templates.toLocaleString('en')} | ${t.rows.toLocaleString('en')} | ${t.seconds.toFixed(1)} | ${Math.round(t.templatesPerSecond).toLocaleString('en')} | ${t.peakRssMb} |`,
    ),
    '',
    '| target | measured | |',
    '|---|---:|---|',
    ...targets().map((t) => `| ${t.target} | ${t.value} | ${t.met ? 'met' : 'NOT MET'} |`),
  ];
  return lines.join('\n');
}
