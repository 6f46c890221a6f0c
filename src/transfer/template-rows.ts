import type { Selectable } from 'kysely';
import type { FieldError } from '../domain/errors.ts';
import { fold } from '../domain/name.ts';
import { templateJson } from '../domain/template.ts';
import { contentProblems, templateProblems } from '../domain/validation.ts';
import type { DumpTable } from '../store/dump/dump.ts';
import type { TemplatesTable } from '../store/schema.ts';
import { toRow, toTemplate } from '../store/templates/columns.ts';
import { InvalidExport } from './format.ts';

// A template row of an import holds only what the API would store: its values pass the domain's schemas (the same
// that check a request), and what the store derives from them — the served JSON `body` and the `search` text — is
// built again from the columns, never taken from the stream (a hostile one could make GET answer otherwise than the
// row, or a search find what the row does not say). A revision's snapshot passes the content schema, since a
// rollback writes it back.

const JSON_COLUMNS = ['docker_entrypoint', 'docker_start_cmd', 'env', 'ports', 'image_platforms'] as const;
const FLAGS = ['is_public', 'is_platform', 'is_serverless'] as const;
const SHOWN_PROBLEMS = 3;

const said = (problems: FieldError[]) =>
  problems
    .slice(0, SHOWN_PROBLEMS)
    .map((p) => `${p.path} ${p.message}`)
    .join('; ');

function parsed(table: string, column: string, text: unknown, line: number): unknown {
  try {
    return JSON.parse(text as string);
  } catch {
    throw new InvalidExport(line, `${table}.${column} is not JSON text`);
  }
}

/** The row as it is to be written, checked (InvalidExport names the line and the fault) and with its derived columns rebuilt. */
export function checkedRow(table: DumpTable, values: unknown[], line: number): unknown[] {
  if (table.name === 'templates') return templateRow(table, values, line);
  const nameKey = table.columns.indexOf('name_key');
  if (nameKey >= 0) {
    const rebuilt = [...values];
    rebuilt[nameKey] = keyOf(table, values);
    return rebuilt;
  }
  if (table.name === 'template_revisions') {
    const value = (name: string) => values[table.columns.indexOf(name)];
    const problems = contentProblems(parsed(table.name, 'snapshot', value('snapshot'), line));
    parsed(table.name, 'diff', value('diff'), line);
    if (problems.length > 0) {
      throw new InvalidExport(
        line,
        `revision ${value('revision') as number} of template ${value('template_id') as string} holds what the API refuses: ${said(problems)}`,
      );
    }
  }
  return values;
}

/**
 * The key a row's name is compared by, built again from the name (never taken from the stream as it is), or the key
 * of its own that migration 0021 gave a row whose name folds as an older one's: that key with the row's id.
 */
function keyOf(table: DumpTable, values: unknown[]): string {
  const value = (column: string) => values[table.columns.indexOf(column)];
  const key = fold(String(value('name')));
  return value('name_key') === `${key} (${String(value('id'))})` ? `${key} (${String(value('id'))})` : key;
}

function templateRow(table: DumpTable, values: unknown[], line: number): unknown[] {
  const row = Object.fromEntries(table.columns.map((column, i) => [column, values[i]])) as unknown as Selectable<TemplatesTable>;
  for (const flag of FLAGS) {
    if (row[flag] !== 0 && row[flag] !== 1) throw new InvalidExport(line, `templates.${flag} must be 0 or 1`);
  }
  for (const column of JSON_COLUMNS) parsed(table.name, column, row[column], line);
  const template = toTemplate(row);
  const problems = templateProblems(JSON.parse(templateJson(template)));
  if (problems.length > 0) throw new InvalidExport(line, `template ${row.id} holds what the API refuses: ${said(problems)}`);
  // The queue of image checks travels as it was; everything the record holds is written from the record.
  const rebuilt: Record<string, unknown> = { ...row, ...toRow(template), seq: row.seq, name_key: keyOf(table, values) };
  return table.columns.map((column) => rebuilt[column]);
}
