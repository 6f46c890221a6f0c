import type { Readable } from 'node:stream';
import { DUMP_TABLES, type DumpTable, type DumpWriter, kindMismatch, notEmpty, RowRejected } from '../store/dump/dump.ts';
import type { Store } from '../store/store.ts';
import type { TransferSummary } from './export.ts';
import { count, FORMAT, InvalidExport, type Progress, VERSION } from './format.ts';
import { References } from './references.ts';
import { checkedRow } from './template-rows.ts';

// `podplate import`: an export written into an empty database, all of it or nothing, naming the line at fault.

/**
 * The longest line an import reads. An export's longest rows are a revision or a kept response of a template at its
 * bounds (a 1 MiB body, and a diff holding its old and new values): a few MiB. A longer line is not an export's.
 */
export const MAX_LINE_CHARS = 16 * 1024 * 1024;

/**
 * The lines of a stream, a chunk's worth at a time, without holding more than a chunk and one line: each chunk is
 * searched once (a long line is kept as its pieces, not joined and searched again per chunk), and a line longer
 * than MAX_LINE_CHARS is refused by its number as soon as it is.
 */
async function* lineBatches(input: Readable, firstLine: () => number): AsyncGenerator<string[]> {
  input.setEncoding('utf8');
  let pieces: string[] = [];
  let held = 0;
  for await (const chunk of input as AsyncIterable<string>) {
    const lines = chunk.split('\n');
    const last = lines.pop() as string;
    if (lines.length > 0) {
      lines[0] = pieces.join('') + lines[0];
      pieces = [];
      held = 0;
    }
    const tooLong = lines.findIndex((line) => line.length > MAX_LINE_CHARS);
    if (tooLong >= 0 || held + last.length > MAX_LINE_CHARS) {
      const at = firstLine() + (tooLong >= 0 ? tooLong : lines.length);
      throw new InvalidExport(at, `a line longer than ${count(MAX_LINE_CHARS)} characters: no export has one`);
    }
    pieces.push(last);
    held += last.length;
    yield lines;
  }
  if (held > 0) yield [pieces.join('')];
}

interface Section {
  table: DumpTable;
  expected: number;
  seen: number;
  batch: unknown[][];
  /** The line of each row in `batch`. */
  lines: number[];
}

/**
 * Reads an export line by line and writes it through `writer`, checking as it goes: the header's format and
 * version, each table in its place with the columns this version has, every value against its column's kind, the
 * row counts, and the end line. Throws InvalidExport naming the first line at fault.
 */
class Reader {
  private line = 0;
  private headerSeen = false;
  private ended = false;
  private next = 0;
  private section: Section | undefined;
  readonly tables: Record<string, number> = {};
  private total = 0;
  /** The insert under way: the next batch is read and checked meanwhile (one insert at a time, on one connection). */
  private writing: Promise<void> = Promise.resolve();
  private readonly references = new References();

  private readonly writer: DumpWriter;
  private readonly progress: Progress;

  constructor(writer: DumpWriter, progress: Progress) {
    this.writer = writer;
    this.progress = progress;
  }

  async read(input: Readable): Promise<void> {
    try {
      for await (const lines of lineBatches(input, () => this.line + 1)) {
        for (const text of lines) await this.take(text);
      }
    } catch (error) {
      // A bad line ends the import; the insert under way settles first (its own failure, if any, came later).
      await this.writing.catch(() => {});
      throw error;
    }
    await this.writing;
    if (!this.ended) {
      const at = this.section
        ? `${this.section.table.name}, after ${count(this.section.seen)} of its ${count(this.section.expected)} rows`
        : '';
      throw new InvalidExport(this.line, `the stream ends here without its end line${at ? ` (in ${at})` : ''}: it is truncated`);
    }
  }

  private async take(text: string): Promise<void> {
    this.line++;
    if (this.ended) throw new InvalidExport(this.line, 'nothing may follow the end line');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new InvalidExport(this.line, text.trim() === '' ? 'an empty line' : 'not valid JSON (the stream may be cut off or damaged)');
    }
    if (!this.headerSeen) return this.header(value);
    if (Array.isArray(value)) return this.row(value);
    if (value === null || typeof value !== 'object') throw new InvalidExport(this.line, 'expected a row (an array) or a table or end line');
    const line = value as Record<string, unknown>;
    if ('table' in line) return this.startTable(line);
    if (line.end === true) return this.end(line);
    throw new InvalidExport(this.line, 'expected a row (an array) or a table or end line');
  }

  private header(value: unknown): void {
    const header = value as Record<string, unknown> | null;
    if (header?.format !== FORMAT)
      throw new InvalidExport(this.line, `not a Podplate export: the first line must be its header ({"format":"${FORMAT}",…})`);
    if (header.version !== VERSION) {
      throw new InvalidExport(this.line, `format version ${JSON.stringify(header.version)}; this Podplate reads version ${VERSION}`);
    }
    this.headerSeen = true;
  }

  private async startTable(line: Record<string, unknown>): Promise<void> {
    await this.closeSection();
    const at = DUMP_TABLES.findIndex((t) => t.name === line.table);
    if (at < 0) throw new InvalidExport(this.line, `unknown table ${JSON.stringify(line.table)}`);
    if (at < this.next) throw new InvalidExport(this.line, `table ${line.table} is out of order (or given twice)`);
    const table = DUMP_TABLES[at] as DumpTable;
    if (JSON.stringify(line.columns) !== JSON.stringify(table.columns)) {
      throw new InvalidExport(
        this.line,
        `table ${table.name} has the columns ${JSON.stringify(line.columns)}; this Podplate's are ${JSON.stringify(table.columns)}`,
      );
    }
    if (!Number.isSafeInteger(line.rows) || (line.rows as number) < 0) throw new InvalidExport(this.line, 'rows must be a count');
    this.next = at + 1;
    this.section = { table, expected: line.rows as number, seen: 0, batch: [], lines: [] };
  }

  private async row(values: unknown[]): Promise<void> {
    const section = this.section;
    if (!section) throw new InvalidExport(this.line, 'a row before any table line');
    const { table } = section;
    if (section.seen === section.expected) {
      throw new InvalidExport(this.line, `table ${table.name} announced ${count(section.expected)} rows, and this is one more`);
    }
    if (values.length !== table.columns.length) {
      throw new InvalidExport(this.line, `a row of ${table.name} has ${table.columns.length} values, not ${values.length}`);
    }
    for (const [i, kind] of table.kinds.entries()) {
      const wrong = kindMismatch(kind, values[i]);
      if (wrong) throw new InvalidExport(this.line, `${table.name}.${table.columns[i]} ${wrong}`);
    }
    const checked = checkedRow(table, values, this.line);
    this.references.row(table, checked, this.line);
    section.seen++;
    section.batch.push(checked);
    section.lines.push(this.line);
    if (section.batch.length >= this.writer.rowsPerInsert(table)) await this.flush(section);
  }

  private async flush(section: Section): Promise<void> {
    if (section.batch.length === 0) return;
    const { table, batch, lines } = section;
    section.batch = [];
    section.lines = [];
    await this.writing;
    this.writing = this.writer.insert(table, batch).catch((error) => {
      if (error instanceof RowRejected) {
        throw new InvalidExport(lines[error.index] as number, `the database refused this row of ${table.name}: ${error.message}`);
      }
      throw error;
    });
    // Its failure is met at the next await of it; until then it must not count as unhandled.
    this.writing.catch(() => {});
    this.total += batch.length;
    this.progress.tick(() => `podplate import: ${table.name} ${count(section.seen)} of ${count(section.expected)} rows`);
  }

  private async closeSection(): Promise<void> {
    const section = this.section;
    if (!section) return;
    if (section.seen !== section.expected) {
      throw new InvalidExport(
        this.line,
        `table ${section.table.name} announced ${count(section.expected)} rows but has ${count(section.seen)}`,
      );
    }
    await this.flush(section);
    this.tables[section.table.name] = section.seen;
    this.section = undefined;
  }

  private async end(line: Record<string, unknown>): Promise<void> {
    await this.closeSection();
    this.references.done();
    if (line.rows !== this.total)
      throw new InvalidExport(this.line, `the end line counts ${String(line.rows)} rows; the stream has ${this.total}`);
    this.ended = true;
  }
}

/**
 * Imports an export into this database: it must hold no data (refused, and left as it was, otherwise). The schema
 * is migrated first; then every row is written in one transaction, committed only if the whole stream is valid.
 */
export async function importInstall(store: Store, input: Readable, progress: Progress): Promise<TransferSummary> {
  const started = performance.now();
  const held = await store.heldTables();
  if (held.length > 0) throw notEmpty(held);
  await store.migrate();
  const tables = await store.restore(async (writer) => {
    const reader = new Reader(writer, progress);
    await reader.read(input);
    return reader.tables;
  });
  const rows = Object.values(tables).reduce((a, b) => a + b, 0);
  return { tables, rows, seconds: (performance.now() - started) / 1000 };
}
