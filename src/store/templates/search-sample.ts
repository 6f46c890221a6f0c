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
const SAMPLE_ROWS = 4_096;
const SAMPLE_TTL_MS = 10 * 60_000;
/** The characters of each sampled row that are split into trigrams, and the trigrams a sample keeps, at most. */
const ROW_CHARS = 128;
const SAMPLE_TRIGRAMS = 20_000;
/** Non-ASCII characters whose kind (part of a word or not) is remembered, at most. */
const KNOWN_CHARS = 20_000;
/**
 * Index entries read for the time one row takes to be checked (measured at 1,000,000 templates: 10–19 ns an entry,
 * about 4.6 µs a row).
 */
const ENTRIES_PER_ROW = 300;
/** With one rare trigram, the others' lists are skipped through: read as if this many times the rare one's. */
const SKIPPED = 4;
const ASCII_WORD = /^[A-Za-z0-9]$/;

/**
 * The trigrams pg_trgm indexes for `text` (each word, padded with two spaces before and one after) or, as a
 * `like '%…%'` pattern, looks up: a word at the pattern's start or end is not padded on that side. A word is a run of
 * characters `isWord` accepts: pg_trgm's letters and digits, which are the database's, not JavaScript's (`²` is a
 * digit to JavaScript, no part of a word to PostgreSQL: see `WordCharacters`).
 */
export function trigramsOf(text: string, pattern: boolean, isWord: (c: string) => boolean): Set<string> {
  const out = new Set<string>();
  const chars = [...text];
  for (let at = 0; at < chars.length; ) {
    if (!isWord(chars[at] as string)) {
      at++;
      continue;
    }
    let end = at;
    while (end < chars.length && isWord(chars[end] as string)) end++;
    const padded = [...(pattern && at === 0 ? [] : [' ', ' ']), ...chars.slice(at, end), ...(pattern && end === chars.length ? [] : [' '])];
    for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3).join(''));
    at = end;
  }
  return out;
}

/**
 * Which characters pg_trgm takes for parts of words, as the database says (`show_trgm` of the character alone is
 * empty for any other): ASCII letters and digits at once, any other character asked once and remembered.
 */
export class WordCharacters {
  private readonly db: Kysely<Tables>;
  private readonly known = new Map<string, boolean>();

  constructor(db: Kysely<Tables>) {
    this.db = db;
  }

  /** Whether `c` is part of a word; a character not learnt yet counts as one (an estimate then errs on the side of work). */
  readonly isWord = (c: string): boolean => (c.charCodeAt(0) < 0x80 ? ASCII_WORD.test(c) : (this.known.get(c) ?? true));

  /** Asks the database about the characters of `texts` (their first `chars`) not known yet, in one query. */
  async learn(texts: string[], chars = Number.POSITIVE_INFINITY): Promise<void> {
    const unknown = new Set<string>();
    for (const [i, text] of texts.entries()) {
      if (i % 64 === 63) await new Promise(setImmediate);
      let n = 0;
      for (const c of text) {
        if (n++ >= chars) break;
        if (c.charCodeAt(0) >= 0x80 && !this.known.has(c)) unknown.add(c);
      }
    }
    if (unknown.size === 0) return;
    if (this.known.size + unknown.size > KNOWN_CHARS) this.known.clear();
    const asked = [...unknown].slice(0, KNOWN_CHARS);
    const { rows } = await sql<{ c: string; word: boolean }>`select c, cardinality(public.show_trgm(c)) > 0 as word
      from unnest(${asked}::text[]) as c`.execute(this.db);
    for (const { c, word } of rows) this.known.set(c, word);
  }
}

/** The first ROW_CHARS characters of `text`. */
function head(text: string): string {
  if (text.length <= ROW_CHARS) return text;
  let end = 0;
  for (let n = 0; n < ROW_CHARS && end < text.length; n++) end += (text.codePointAt(end) as number) > 0xffff ? 2 : 1;
  return text.slice(0, end);
}

export class SearchSample {
  private readonly db: Kysely<Tables>;
  private readonly words: WordCharacters;
  /** For each trigram, the sample rows holding it (bit i: row i). */
  private holding = new Map<string, Uint32Array>();
  private sampled = 0;
  private rows = 0;
  private drawnAt = Number.NEGATIVE_INFINITY;
  private drawing: Promise<void> | undefined;

  constructor(db: Kysely<Tables>) {
    this.db = db;
    this.words = new WordCharacters(db);
  }

  /**
   * The work the trigram index would do for `term`, as a number of rows checked: the rows holding every trigram of
   * it, and the entries read (all of them when it has no trigram: the index cannot serve it). The first asking
   * waits for a sample to be drawn; one asking when it is old draws the next meanwhile.
   */
  async work(term: string): Promise<number> {
    if (this.drawing === undefined && performance.now() - this.drawnAt > SAMPLE_TTL_MS) this.drawing = this.draw();
    if (this.drawnAt === Number.NEGATIVE_INFINITY) await this.drawing;
    await this.words.learn([term]);
    const trigrams = [...trigramsOf(term, true, this.words.isWord)];
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
      const { rows: drawn } = await sql<{ search: string }>`select search from templates
        tablesample system (${sql.lit(percent)}) limit ${SAMPLE_ROWS}`.execute(this.db);
      // Bounded whatever the rows hold (a name may be 255 characters of as many trigrams): their first ROW_CHARS
      // characters, SAMPLE_TRIGRAMS trigrams in all (one seen after is as if no row held it), made into bits 64
      // rows at a time, the event loop served between.
      const texts = drawn.map(({ search }) => search);
      await this.words.learn(texts, ROW_CHARS);
      const holding = new Map<string, Uint32Array>();
      for (let i = 0; i < texts.length; i++) {
        if (i % 64 === 63) await new Promise(setImmediate);
        for (const trigram of trigramsOf(head(texts[i] as string), false, this.words.isWord)) {
          let bits = holding.get(trigram);
          if (bits === undefined) {
            if (holding.size >= SAMPLE_TRIGRAMS) continue;
            bits = new Uint32Array(Math.ceil(texts.length / 32));
            holding.set(trigram, bits);
          }
          bits[i >>> 5] = (bits[i >>> 5] as number) | (1 << (i & 31));
        }
      }
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
