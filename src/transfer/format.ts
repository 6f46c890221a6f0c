// The export format (docs/operations.md): NDJSON, one JSON value a line. A header, then each table as a line that
// names it, its columns and its row count, followed by that many rows (arrays of the columns' values), then an end
// line. A stream that stops anywhere short of its end line is truncated, and imports nothing.

export const FORMAT = 'podplate-export';
/** Raised when a reader of the old format could no longer read the new one. */
export const VERSION = 1;

export interface Header {
  format: typeof FORMAT;
  version: number;
  exportedAt: string;
  /** The database it came from, and the latest migration its schema had. */
  source: 'sqlite' | 'postgres';
  schema: string;
}

export interface TableLine {
  table: string;
  columns: string[];
  rows: number;
}

export interface EndLine {
  end: true;
  /** Rows in all, over every table. */
  rows: number;
}

/** An export that can't be imported: what is wrong, and on which line (1-based). */
export class InvalidExport extends Error {
  readonly line: number;

  constructor(line: number, detail: string) {
    super(`line ${line}: ${detail}`);
    this.line = line;
    this.name = 'InvalidExport';
  }
}

/** Progress for people watching a long export or import: a line at most every `everyMs`, and the last one. */
export class Progress {
  private last = Date.now();
  private readonly say: (message: string) => void;
  private readonly everyMs;

  constructor(say: (message: string) => void, everyMs = 2000) {
    this.say = say;
    this.everyMs = everyMs;
  }

  tick(message: () => string): void {
    const now = Date.now();
    if (now - this.last < this.everyMs) return;
    this.last = now;
    this.say(message());
  }

  done(message: string): void {
    this.say(message);
  }
}

export const count = (n: number) => n.toLocaleString('en');
