import type { FieldChange } from './model.ts';

// Diffs as people read them: each field by its label in the form, each environment variable on a row of its own.
// No DOM here: test/ui/diff.test.ts runs it under Node.

/** The form's name for each field of a template. */
export const FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  imageName: 'Image',
  category: 'Category',
  isServerless: 'Serverless',
  isPublic: 'Public',
  containerDiskInGb: 'Container disk (GB)',
  volumeInGb: 'Volume (GB)',
  volumeMountPath: 'Volume mount path',
  containerRegistryAuthId: 'Registry auth',
  dockerEntrypoint: 'Entrypoint',
  dockerStartCmd: 'Start command',
  env: 'Environment variables',
  ports: 'Ports',
  readme: 'Readme',
};

/** One line of a diff for people: what changed, and its value before and after (undefined: it was not there). */
export interface ChangeRow {
  label: string;
  /** The variable's name, for a row of the environment (its values are masked where shown). */
  variable?: string;
  from: string | undefined;
  to: string | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value as short readable text. */
export function showValue(value: unknown): string {
  if (typeof value === 'string') return value === '' ? '(empty)' : value;
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.length ? value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(' ') : '(none)';
  return JSON.stringify(value);
}

/** The rows of a diff: fields by label, and the environment by variable (added, removed or changed). */
export function changeRows(diff: FieldChange[]): ChangeRow[] {
  const rows: ChangeRow[] = [];
  for (const change of diff) {
    if (change.field === 'env' && isRecord(change.from) && isRecord(change.to)) {
      const before = change.from;
      const after = change.to;
      const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
      for (const name of names) {
        // Own names only: a variable named toString or constructor is no property of every object.
        const from = Object.hasOwn(before, name) ? String(before[name]) : undefined;
        const to = Object.hasOwn(after, name) ? String(after[name]) : undefined;
        if (from !== to) rows.push({ label: `Variable ${name}`, variable: name, from, to });
      }
      continue;
    }
    rows.push({ label: FIELD_LABELS[change.field] ?? change.field, from: showValue(change.from), to: showValue(change.to) });
  }
  return rows;
}

/** JSON text with the keys of objects in order, so that two maps with the same entries read the same. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    isRecord(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );

/** The fields of `after` whose value differs in `before`, for a diff made in the browser (the API's shape). */
export function diffOf(before: Record<string, unknown>, after: Record<string, unknown>): FieldChange[] {
  return Object.keys(after)
    .filter((field) => field in before && canonical(before[field]) !== canonical(after[field]))
    .map((field) => ({ field, from: before[field], to: after[field] }));
}
