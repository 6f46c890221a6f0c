import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { DUMP_TABLES } from '../store/dump/dump.ts';
import type { Store } from '../store/store.ts';
import { count, type EndLine, FORMAT, type Header, type Progress, type TableLine, VERSION } from './format.ts';

// `podplate export`: the whole install as one NDJSON stream, read in one consistent snapshot while it serves.

const PAGE = 2000;
const CHUNK = 1 << 16;

export interface TransferSummary {
  /** Rows by table. */
  tables: Record<string, number>;
  rows: number;
  seconds: number;
}

export class OperationRefused extends Error {
  override name = 'OperationRefused';
}

/** Lines gathered into chunks, written with backpressure: the install is never held in memory. */
class LineWriter {
  private pending: string[] = [];
  private size = 0;
  private readonly output: Writable;

  constructor(output: Writable) {
    this.output = output;
  }

  async line(text: string): Promise<void> {
    this.pending.push(text);
    this.size += text.length + 1;
    if (this.size >= CHUNK) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const chunk = `${this.pending.join('\n')}\n`;
    this.pending = [];
    this.size = 0;
    if (!this.output.write(chunk)) await once(this.output, 'drain');
  }
}

/** Writes the install to `output`; the schema must be up to date (an export is of one known format). */
export async function exportInstall(store: Store, output: Writable, progress: Progress): Promise<TransferSummary> {
  const { applied, pending } = await store.migrationState();
  const newer = applied.filter((m) => !m.known).map((m) => m.name);
  if (newer.length > 0) {
    throw new OperationRefused(`the database was migrated by a newer version (${newer.join(', ')}): export it with that version`);
  }
  if (pending.length > 0) {
    throw new OperationRefused(
      `the database's schema is not up to date (${pending.length} migration(s) to run, the next ${pending[0]}): run podplate migrate first`,
    );
  }
  const started = performance.now();
  return store.snapshot(async (reader) => {
    const out = new LineWriter(output);
    const header: Header = {
      format: FORMAT,
      version: VERSION,
      exportedAt: new Date().toISOString(),
      source: reader.dialect,
      schema: store.latestMigration(),
    };
    await out.line(JSON.stringify(header));
    const tables: Record<string, number> = {};
    let total = 0;
    for (const table of DUMP_TABLES) {
      const rows = await reader.count(table);
      const line: TableLine = { table: table.name, columns: [...table.columns], rows };
      await out.line(JSON.stringify(line));
      let written = 0;
      for await (const page of reader.pages(table, PAGE)) {
        for (const row of page) await out.line(JSON.stringify(row));
        written += page.length;
        progress.tick(() => `podplate export: ${table.name} ${count(written)} of ${count(rows)} rows`);
      }
      // The snapshot can't change under the export: a difference is a bug, and the stream must not look whole.
      if (written !== rows) throw new Error(`${table.name}: counted ${rows} rows but read ${written}`);
      tables[table.name] = rows;
      total += rows;
    }
    const end: EndLine = { end: true, rows: total };
    await out.line(JSON.stringify(end));
    await out.flush();
    return { tables, rows: total, seconds: (performance.now() - started) / 1000 };
  });
}
