import type { Endpoint, PodplateProblem, RegistryAuth, Release, Revision, Template } from '../client/index.ts';
import { releaseState } from '../domain/release-state.ts';
import { maskedEnvValue, maskTokens } from '../domain/token-formats.ts';
import type { Shape } from './command.ts';

// What the client commands print: aligned tables and detail views for people, the API's own JSON for scripts.

/**
 * Characters another account's text must not bring to a terminal raw, whatever the format: control characters (ESC,
 * the C1 controls, DEL: they move the cursor, retitle the window, write the clipboard) and those that reorder or hide
 * text (bidirectional controls, zero-width and other invisible characters: they make one name look like another).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
const hex = (c: string, digits: number) => c.charCodeAt(0).toString(16).padStart(digits, '0');

/** Text for a terminal: newline and tab as they are, every other unsafe character as an escape (`\x1b`, `\u202e`). */
export const terminalSafe = (text: string) =>
  text.replace(UNSAFE, (c) => (c.charCodeAt(0) < 0x100 ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`));

/** JSON or YAML text with each unsafe character written as a `\uXXXX` escape (both read it back as the same string). */
export const escapeUnsafe = (text: string) => text.replace(UNSAFE, (c) => `\\u${hex(c, 4)}`);

const line = (text: string) => (text.endsWith('\n') ? text : `${text}\n`);
export const out = (text: string) => process.stdout.write(terminalSafe(line(text)));
export const note = (text: string) => process.stderr.write(terminalSafe(line(text)));

/** The API's JSON as it is, for scripts: the same values, with every unsafe character escaped. */
export function printJson(value: unknown): void {
  process.stdout.write(line(escapeUnsafe(JSON.stringify(value, null, 2))));
}

/** A table column: `flex` ones give up width when the terminal is narrow; `wide` ones show only with -o wide. */
export interface Column {
  header: string;
  flex?: boolean;
  wide?: boolean;
}

/** The terminal's width: COLUMNS when set, else the terminal's own, else (not a terminal) 80. */
export function terminalWidth(env: NodeJS.ProcessEnv = process.env): number {
  const columns = Number(env.COLUMNS);
  if (Number.isInteger(columns) && columns > 0) return columns;
  return process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : 80;
}

/** A table cell as the terminal will show it, on one line: its unsafe characters, newlines and tabs escaped first, so
 * that the columns are measured by what is printed. */
const cellText = (text: string) => terminalSafe(text).replaceAll('\n', '\\n').replaceAll('\t', '\\t');

const cut = (text: string, width: number) => (text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text);

/**
 * Columns padded to their widest cell, the last one not padded. Without `wide`, the wide-only columns are left out
 * and the flexible ones are narrowed (their cells cut with "…"), widest first, until a row fits the terminal.
 */
export function table(columns: Column[], rows: string[][], options: { wide?: boolean; headers?: boolean; width?: number } = {}): string {
  const shown = columns.map((c, i) => ({ ...c, i })).filter((c) => options.wide || !c.wide);
  const lines = [
    ...(options.headers === false ? [] : [shown.map((c) => c.header)]),
    ...rows.map((r) => shown.map((c) => cellText(r[c.i] ?? ''))),
  ];
  const widths = shown.map((c, i) => Math.max(c.header.length, ...lines.map((l) => (l[i] ?? '').length)));
  if (!options.wide) {
    const limit = options.width ?? terminalWidth();
    const floor = (i: number) => Math.max(8, Math.min(shown[i]?.header.length ?? 0, 12));
    let total = widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
    while (total > limit) {
      let widest = -1;
      for (let i = 0; i < widths.length; i++) {
        if (shown[i]?.flex && (widths[i] ?? 0) > floor(i) && (widest < 0 || (widths[i] ?? 0) > (widths[widest] ?? 0))) widest = i;
      }
      if (widest < 0) break;
      widths[widest] = (widths[widest] ?? 0) - 1;
      total--;
    }
  }
  return lines
    .map((line) =>
      line
        .map((cell, i) => (i === line.length - 1 ? cut(cell, widths[i] ?? 0) : cut(cell, widths[i] ?? 0).padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86400],
  ['month', 30 * 86400],
  ['week', 7 * 86400],
  ['day', 86400],
  ['hour', 3600],
  ['minute', 60],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "3 minutes ago", "yesterday", "just now": how long ago an ISO time was. */
export function ago(iso: string, now = Date.now()): string {
  const seconds = (Date.parse(iso) - now) / 1000;
  if (!Number.isFinite(seconds)) return iso;
  for (const [unit, size] of UNITS) if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  return 'just now';
}

/** An ISO time with how long ago it was, for detail views. */
export const when = (iso: string) => `${iso} (${ago(iso)})`;

/** `label: value` lines with the values aligned. */
export function details(entries: [string, string][]): string {
  const width = Math.max(...entries.map(([label]) => label.length)) + 1;
  return entries.map(([label, value]) => `${`${label}:`.padEnd(width)}  ${value.replace(/\n/g, `\n${' '.repeat(width + 2)}`)}`).join('\n');
}

const list = (items: string[]) => (items.length === 0 ? '-' : items.join(' '));
const shellWord = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
const command = (words: string[]) => (words.length === 0 ? '(image default)' : words.map(shellWord).join(' '));

export function visibility(t: Pick<Template, 'isPlatform' | 'isPublic'>): string {
  if (t.isPlatform) return 'official';
  return t.isPublic ? 'public' : 'private';
}

/** Another account's name, where the API gives it (list items may carry `ownerName`). */
const ownerOf = (t: Template) => (t as Template & { ownerName?: string }).ownerName;

/** The templates' table; an OWNER column when the API names the owners. */
export function templateShape(templates: Template[]): Shape<Template> {
  const owners = templates.some((t) => ownerOf(t) !== undefined);
  return {
    columns: [
      { header: 'ID' },
      { header: 'NAME', flex: true },
      ...(owners ? [{ header: 'OWNER', flex: true }] : []),
      { header: 'IMAGE', flex: true },
      { header: 'CATEGORY', wide: true },
      { header: 'KIND' },
      { header: 'VISIBILITY', wide: true },
      { header: 'PORTS', wide: true, flex: true },
      { header: 'REV' },
      { header: 'CHECK', flex: true },
      { header: 'CREATED', wide: true },
      { header: 'UPDATED' },
    ],
    row: (t) => [
      t.id,
      t.name,
      ...(owners ? [ownerOf(t) ?? ''] : []),
      t.imageName,
      t.category,
      t.isServerless ? 'serverless' : 'pod',
      visibility(t),
      list(t.ports),
      String(t.revision),
      // The image check's status, and the compressed size when known: "verified 7.2 GB".
      t.imageCheck.sizeBytes === null ? t.imageCheck.status : `${t.imageCheck.status} ${gigabytes(t.imageCheck.sizeBytes)}`,
      ago(t.createdAt),
      ago(t.updatedAt),
    ],
    id: (t) => t.id,
  };
}

/** A size in gigabytes (2^30 bytes, as containerDiskInGb counts them), one decimal. */
export const gigabytes = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GB`;

/** A template's image check, a fact a line: its status first, then what the registry said. */
export function imageCheckText(check: Template['imageCheck']): string {
  const lines = [check.checkedAt ? `${check.status} (checked ${ago(check.checkedAt)})` : check.status];
  if (check.digest) lines.push(`digest ${check.digest}`);
  if (check.platforms.length > 0) lines.push(`platforms ${check.platforms.join(', ')}`);
  if (check.sizeBytes !== null) lines.push(`size ${gigabytes(check.sizeBytes)} compressed`);
  if (check.cudaVersion) lines.push(`CUDA ${check.cudaVersion}`);
  if (check.reason) lines.push(check.reason);
  return lines.join('\n');
}

/** A template's details; env values masked (secret references shown as written) unless `showValues`. */
export function templateDetails(t: Template, etag?: string, showValues = false): string {
  const env = Object.entries(t.env).map(([k, v]) => `${k}=${showValues ? v : maskedEnvValue(v)}`);
  const owner = ownerOf(t);
  const entries: [string, string][] = [
    ['ID', t.id],
    ['Name', t.name],
    ...(owner !== undefined ? [['Owner', owner] as [string, string]] : []),
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
    ['Image check', imageCheckText(t.imageCheck)],
    ['Revision', etag ? `${t.revision} (ETag ${etag})` : String(t.revision)],
    ['Runtime', `${t.runtimeInMin} min, earned ${t.earned}`],
    ['Created', when(t.createdAt)],
    ['Updated', when(t.updatedAt)],
  ];
  if (t.readme) entries.push(['Readme', t.readme]);
  return details(entries);
}

type Change = { field: string; from?: unknown; to?: unknown };
type Env = Record<string, string>;
const isEnv = (v: unknown): v is Env => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An environment with every value masked but secret references (`{{ secret.NAME }}`), which hold no secret. */
export const maskEnv = (env: Env): Env => Object.fromEntries(Object.entries(env).map(([k, v]) => [k, maskedEnvValue(v)]));

/**
 * What the API sent, with every env value masked as `maskEnv` does: a template's `env`, and the `from`/`to` of an env
 * change in a revision's or a release's diff. What -o json|yaml prints unless --show-values.
 */
export function withoutValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutValues);
  if (!isEnv(value)) return value;
  if (value.field === 'env' && 'from' in value)
    return { ...value, from: isEnv(value.from) ? maskEnv(value.from) : value.from, to: isEnv(value.to) ? maskEnv(value.to) : value.to };
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'env' && isEnv(v) ? maskEnv(v) : withoutValues(v)]));
}

/** Which variables an env change added, changed and removed, by name: "changed A, added B, removed C". */
function envChanges(from: unknown, to: unknown): string {
  const [before, after] = [isEnv(from) ? from : {}, isEnv(to) ? to : {}];
  // Own names only: a variable named toString or constructor is no property of every object.
  const verb = (k: string) =>
    !Object.hasOwn(before, k) ? 'added' : !Object.hasOwn(after, k) ? 'removed' : before[k] !== after[k] ? 'changed' : undefined;
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return names.flatMap((k) => (verb(k) ? [`${verb(k)} ${k}`] : [])).join(', ');
}

/**
 * A change as text. Unless `showValues`, an env change names the variables only, and other values in a well-known
 * token format are masked (`hf_••••••••`).
 */
const change = (c: Change, showValues = false) => {
  if (c.field === 'env' && !showValues) return `env: ${envChanges(c.from, c.to)}`;
  const value = (v: unknown) => (showValues ? JSON.stringify(v) : maskTokens(JSON.stringify(v) ?? ''));
  return `${c.field}: ${value(c.from)} → ${value(c.to)}`;
};

/** What an update changed, a field a line: `  imageName: "a" → "b"`, `  env: changed A`; values as `change` says. */
export const diffText = (changes: Change[], showValues = false) => changes.map((c) => `  ${change(c, showValues)}`).join('\n');

/** The fields whose values differ between two versions of a resource, in `fields` order. */
export function diffOf<T extends object>(
  before: T,
  after: T,
  fields: (keyof T & string)[],
): { field: string; from: unknown; to: unknown }[] {
  return fields
    .filter((f) => JSON.stringify(sorted(before[f])) !== JSON.stringify(sorted(after[f])))
    .map((f) => ({ field: f, from: before[f], to: after[f] }));
}
const sorted = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v;

/** Revisions as a table; values in a well-known token format masked unless `showValues`. */
export const revisionShape = (showValues = false): Shape<Revision> => ({
  columns: [
    { header: 'REV' },
    { header: 'CREATED' },
    { header: 'AUTHOR' },
    { header: 'KEY', wide: true },
    { header: 'CHANGES', flex: true },
  ],
  row: (r) => [
    String(r.revision),
    ago(r.createdAt),
    r.keyLabel ? `${r.author} (${r.keyLabel})` : r.author || r.keyId,
    r.keyId,
    r.diff.length === 0 ? '(created)' : r.diff.map((c) => change(c, showValues)).join('; '),
  ],
  id: (r) => String(r.revision),
});

/** Endpoints as a table, each with its template's name (from `names`, by template id; the id where it is unknown). */
export const endpointShape = (names: Map<string, string>): Shape<Endpoint> => ({
  columns: [
    { header: 'ID' },
    { header: 'NAME', flex: true },
    { header: 'TEMPLATE', flex: true },
    { header: 'TEMPLATE ID', wide: true },
    { header: 'WORKERS' },
    { header: 'VERSION' },
    { header: 'CREATED', wide: true },
    { header: 'UPDATED' },
  ],
  row: (e) => [
    e.id,
    e.name,
    names.get(e.templateId) ?? e.templateId,
    e.templateId,
    `${e.workersMin}-${e.workersMax}`,
    String(e.version),
    ago(e.createdAt),
    ago(e.updatedAt),
  ],
  id: (e) => e.id,
});

export function endpointDetails(e: Endpoint, templateName?: string): string {
  return details([
    ['ID', e.id],
    ['Name', e.name],
    ['Template', templateName === undefined ? e.templateId : `${templateName} (${e.templateId})`],
    ['Workers', `${e.workersMin} to ${e.workersMax}`],
    ['Version', String(e.version)],
    ['Created', when(e.createdAt)],
    ['Updated', when(e.updatedAt)],
  ]);
}

/** An endpoint's releases as a table: each says where it stands in words (a superseded one, by which of `all`). */
/** Releases as a table; the webhook's delivery (-o wide) only for a platform key, the one shown it. */
export function releaseShape(all: Release[]): Shape<Release> {
  const delivered = all.some((r) => r.delivery !== undefined);
  const columns: (Column & { of: (r: Release) => string })[] = [
    { header: 'ID', of: (r) => r.id },
    { header: 'VERSION', of: (r) => String(r.version) },
    { header: 'TEMPLATE REV', of: (r) => String(r.templateRevision) },
    { header: 'STATUS', of: (r) => r.status },
    { header: 'WORKERS', of: (r) => `${r.workersUpdated}/${r.workersTotal}` },
    { header: 'STATE', flex: true, of: (r) => releaseState(r, all) },
    ...(delivered
      ? [
          {
            header: 'WEBHOOK',
            wide: true,
            of: (r: Release) => (!r.delivery ? '-' : r.delivery.deliveredAt ? 'delivered' : `${r.delivery.attempts} attempts`),
          },
        ]
      : []),
    { header: 'CHANGES', wide: true, of: (r) => r.diff.map((c) => change(c)).join('; ') },
    { header: 'UPDATED', of: (r) => ago(r.updatedAt) },
  ];
  return {
    columns: columns.map(({ of: _, ...column }) => column),
    row: (r) => columns.map((column) => column.of(r)),
    id: (r) => r.id,
  };
}

export const registryAuthShape: Shape<RegistryAuth> = {
  columns: [{ header: 'ID' }, { header: 'NAME', flex: true }, { header: 'CREATED' }],
  row: (a) => [a.id, a.name, ago(a.createdAt)],
  id: (a) => a.id,
};

export function registryAuthDetails(a: RegistryAuth): string {
  return details([
    ['ID', a.id],
    ['Name', a.name],
    ['Created', when(a.createdAt)],
  ]);
}

/** A problem as people read it: its title and detail, then each offending field on a line of its own. */
export function problemText(problem: PodplateProblem): string {
  const lines = [`podplate: ${problem.title} (${problem.status}): ${problem.detail}`];
  for (const e of problem.errors) lines.push(`  ${e.path || '/'}${e.in === 'body' ? '' : ` (${e.in})`}: ${e.message}`);
  return lines.join('\n');
}
