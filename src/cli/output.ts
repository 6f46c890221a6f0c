import type { Endpoint, PodplateProblem, RegistryAuth, Release, Revision, Template } from '../client/index.ts';

import { maskedEnvValue, maskTokens } from '../domain/token-formats.ts';

// What the client commands print: aligned tables and detail views for people, the API's own JSON for scripts.

/**
 * Text for a terminal: control characters other than newline and tab (ESC, the C1 controls, DEL…) shown as escapes,
 * so a template's content from another account can't move the cursor, retitle the window or write the clipboard.
 */
export const terminalSafe = (text: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

const line = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);
export const out = (text: string) => process.stdout.write(terminalSafe(line(text)));
export const note = (text: string) => process.stderr.write(terminalSafe(line(text)));

/** The API's JSON as it is, for scripts (JSON escapes the C0 controls itself). */
export function printJson(value: unknown): void {
  process.stdout.write(line(JSON.stringify(value, null, 2)));
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `label: value` lines with the values aligned. */
export function details(entries: [string, string][]): string {
  const width = Math.max(...entries.map(([label]) => label.length)) + 1;
  return entries.map(([label, value]) => `${`${label}:`.padEnd(width)}  ${value.replace(/\n/g, `\n${' '.repeat(width + 2)}`)}`).join('\n');
}

const list = (items: string[]) => (items.length === 0 ? '-' : items.join(' '));
const shellWord = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
const command = (words: string[]) => (words.length === 0 ? '(image default)' : words.map(shellWord).join(' '));
const short = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export function visibility(t: Pick<Template, 'isPlatform' | 'isPublic'>): string {
  if (t.isPlatform) return 'official';
  return t.isPublic ? 'public' : 'private';
}

export function templateTable(templates: Template[]): string {
  return table(
    ['ID', 'NAME', 'IMAGE', 'CATEGORY', 'KIND', 'VISIBILITY', 'REV', 'UPDATED'],
    templates.map((t) => [
      t.id,
      short(t.name, 40),
      short(t.imageName, 60),
      t.category,
      t.isServerless ? 'serverless' : 'pod',
      visibility(t),
      String(t.revision),
      t.updatedAt,
    ]),
  );
}

/** A template's details; env values masked (but secret references) unless `showValues`. */
export function templateDetails(t: Template, etag?: string, showValues = false): string {
  const env = Object.entries(t.env).map(([k, v]) => `${k}=${showValues ? v : maskedEnvValue(v)}`);
  const entries: [string, string][] = [
    ['ID', t.id],
    ['Name', t.name],
    ['Image', t.imageName],
    ['Category', t.category],
    ['Kind', t.isServerless ? 'serverless' : 'pod'],
    ['Visibility', visibility(t)],
    ['Container disk', `${t.containerDiskInGb} GB`],
    ['Volume', t.volumeInGb > 0 ? `${t.volumeInGb} GB at ${t.volumeMountPath}` : `none (mount path ${t.volumeMountPath})`],
    ['Ports', list(t.ports)],
    ['Entrypoint', command(t.dockerEntrypoint)],
    ['Start command', command(t.dockerStartCmd)],
    ['Env', env.length === 0 ? '-' : env.join('\n')],
    ['Registry auth', t.containerRegistryAuthId || '-'],
    ['Revision', etag ? `${t.revision} (ETag ${etag})` : String(t.revision)],
    ['Runtime', `${t.runtimeInMin} min, earned ${t.earned}`],
    ['Created', t.createdAt],
    ['Updated', t.updatedAt],
  ];
  if (t.readme) entries.push(['Readme', t.readme]);
  return details(entries);
}

const change = (c: { field: string; from?: unknown; to?: unknown }, show: (text: string) => string) =>
  `${c.field}: ${show(JSON.stringify(c.from))} → ${show(JSON.stringify(c.to))}`;

/** Revisions and what each changed; values in a well-known token format masked unless `showValues`. */
export function revisionTable(revisions: Revision[], showValues = false): string {
  const show = showValues ? (text: string) => text : maskTokens;
  return table(
    ['REV', 'CREATED', 'KEY', 'CHANGES'],
    revisions.map((r) => [
      String(r.revision),
      r.createdAt,
      r.keyId,
      r.diff.length === 0 ? '(created)' : short(r.diff.map((c) => change(c, show)).join('; '), 100),
    ]),
  );
}

export function endpointTable(endpoints: Endpoint[]): string {
  return table(
    ['ID', 'NAME', 'TEMPLATE', 'WORKERS', 'VERSION', 'UPDATED'],
    endpoints.map((e) => [e.id, short(e.name, 40), e.templateId, `${e.workersMin}-${e.workersMax}`, String(e.version), e.updatedAt]),
  );
}

export function endpointDetails(e: Endpoint): string {
  return details([
    ['ID', e.id],
    ['Name', e.name],
    ['Template', e.templateId],
    ['Workers', `${e.workersMin} to ${e.workersMax}`],
    ['Version', String(e.version)],
    ['Created', e.createdAt],
    ['Updated', e.updatedAt],
  ]);
}

export function releaseTable(releases: Release[]): string {
  return table(
    ['ID', 'VERSION', 'TEMPLATE REV', 'STATUS', 'WORKERS', 'WEBHOOK', 'UPDATED'],
    releases.map((r) => [
      r.id,
      String(r.version),
      String(r.templateRevision),
      r.status,
      `${r.workersUpdated}/${r.workersTotal}`,
      r.delivery.deliveredAt ? 'delivered' : `${r.delivery.attempts} attempts`,
      r.updatedAt,
    ]),
  );
}

export function registryAuthTable(auths: RegistryAuth[]): string {
  return table(
    ['ID', 'NAME', 'CREATED'],
    auths.map((a) => [a.id, short(a.name, 60), a.createdAt]),
  );
}

export function registryAuthDetails(a: RegistryAuth): string {
  return details([
    ['ID', a.id],
    ['Name', a.name],
    ['Created', a.createdAt],
  ]);
}

/** A problem as people read it: its title and detail, then each offending field on a line of its own. */
export function problemText(problem: PodplateProblem): string {
  const lines = [`podplate: ${problem.title} (${problem.status}): ${problem.detail}`];
  for (const e of problem.errors) lines.push(`  ${e.path || '/'}${e.in === 'body' ? '' : ` (${e.in})`}: ${e.message}`);
  return lines.join('\n');
}
