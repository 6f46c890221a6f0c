import { type Kysely, sql } from 'kysely';
import type { Tables } from '../schema.ts';

// PostgreSQL: how much work its trigram index would do for a term, estimated before asking it. The index reads the
// posting lists of the term's trigrams (skipping through the others when one is rare) and hands over every row that
// holds all of them, each then checked against the term in the table. A term of frequent words in an order no row
// holds (`pytorch:2.1.0-py3.11`, where rows hold `…2.1.0-py3.10` and `…2.4.0-py3.11`) made it check 39,378 rows,
// 250 ms at 1,000,000 templates, to find none; `runpod/pytorch:2.4.0-py3.10` read lists of 7.9 million entries in
// all, 105 ms, for 452 rows. PostgreSQL keeps no count of each trigram (SQLite's trigram table does: see
// `rareTrigramOf`), so a sample of the `search` column, drawn again every SAMPLE_TTL_MS, counts them: each
// trigram seen maps to the sample rows holding it, as bits.

/** The rows a sample holds, at most. */
export const SAMPLE_ROWS = 4_096;
const SAMPLE_TTL_MS = 10 * 60_000;
const WORD = /[\p{L}\p{N}]+/gu;
/**
 * Index entries read for the time one row takes to be checked (measured at 1,000,000 templates: 10–19 ns an entry,
 * about 4.6 µs a row).
 */
const ENTRIES_PER_ROW = 300;
/** With one rare trigram, the others' lists are skipped through: read as if this many times the rare one's. */
const SKIPPED = 4;

/**
 * The trigrams pg_trgm indexes for `text` (each word of letters and digits, padded with two spaces before and one
 * after) or, as a `like '%…%'` pattern, looks up: a word at the pattern's start or end is not padded on that side.
 */
export function trigramsOf(text: string, pattern = false): Set<string> {
  const out = new Set<string>();
  for (const match of text.matchAll(WORD)) {
    const start = pattern && match.index === 0 ? '' : '  ';
    const end = pattern && match.index + match[0].length === text.length ? '' : ' ';
    const chars = [...`${start}${match[0]}${end}`];
    for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(''));
  }
  return out;
}

export class SearchSample {
  private readonly db: Kysely<Tables>;
  /** For each trigram, the sample rows holding it (bit i: row i). */
  private holding = new Map<string, Uint32Array>();
  private sampled = 0;
  private rows = 0;
  private drawnAt = Number.NEGATIVE_INFINITY;
  private drawing: Promise<void> | undefined;

  constructor(db: Kysely<Tables>) {
    this.db = db;
  }

  /**
   * The work the trigram index would do for `term`, as a number of rows checked: the rows holding every trigram of
   * it, and the entries read (all of them when it has no trigram: the index cannot serve it). The first asking
   * waits for a sample to be drawn; one asking when it is old draws the next meanwhile.
   */
  async work(term: string): Promise<number> {
    if (this.drawing === undefined && performance.now() - this.drawnAt > SAMPLE_TTL_MS) this.drawing = this.draw();
    if (this.drawnAt === Number.NEGATIVE_INFINITY) await this.drawing;
    const trigrams = [...trigramsOf(term, true)];
    if (trigrams.length === 0 || this.sampled === 0) return this.rows;
    const all = new Uint32Array(Math.ceil(this.sampled / 32)).fill(0xffffffff);
    let entries = 0;
    let rarest = Number.POSITIVE_INFINITY;
    for (const trigram of trigrams) {
      const rows = this.holding.get(trigram);
      const count = rows === undefined ? 0 : bitCount(rows);
      entries += count;
      rarest = Math.min(rarest, count);
      for (let w = 0; w < all.length; w++) all[w] = rows === undefined ? 0 : (all[w] as number) & (rows[w] as number);
    }
    const read = Math.min(entries, rarest * trigrams.length * SKIPPED);
    return Math.round(((bitCount(all) + read / ENTRIES_PER_ROW) / this.sampled) * this.rows);
  }

  /** Draws a sample of about SAMPLE_ROWS rows, whole pages of the table picked at random (`tablesample system`). */
  private async draw(): Promise<void> {
    try {
      const { rows: sized } = await sql<{ n: number }>`select greatest(reltuples, 0)::float8 as n from pg_class
        where oid = to_regclass('templates')`.execute(this.db);
      let rows = Number(sized[0]?.n ?? 0);
      // Never analyzed (a new install): counted, the install is young.
      if (rows === 0)
        rows = Number(
          (
            await this.db
              .selectFrom('templates')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirst()
          )?.n ?? 0,
        );
      const percent = Math.min(100, (100 * SAMPLE_ROWS) / Math.max(1, rows));
      const { rows: texts } = await sql<{ search: string }>`select search from templates
        tablesample system (${sql.lit(percent)}) limit ${2 * SAMPLE_ROWS}`.execute(this.db);
      const holding = new Map<string, Uint32Array>();
      texts.forEach(({ search }, i) => {
        for (const trigram of trigramsOf(search)) {
          const bits = holding.get(trigram) ?? new Uint32Array(Math.ceil(texts.length / 32));
          holding.set(trigram, bits);
          bits[i >>> 5] = (bits[i >>> 5] as number) | (1 << (i & 31));
        }
      });
      this.holding = holding;
      this.sampled = texts.length;
      this.rows = rows;
    } catch {
      // Kept as it was (or none): the search is tried within its time instead, and a sample drawn again later.
    } finally {
      this.drawnAt = performance.now();
      this.drawing = undefined;
    }
  }
}

function bitCount(bits: Uint32Array): number {
  let n = 0;
  for (let word of bits) {
    for (; word !== 0; n++) word &= word - 1;
  }
  return n;
}
