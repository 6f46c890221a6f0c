import autocannon from 'autocannon';
import { TERMS } from './catalogue.ts';
import { type Figures, figures, load, type Measured, quantile, timedGet } from './load.ts';
import { seededIds } from './seed.ts';
import { SETTINGS } from './settings.ts';

// Search and paging at scale (issue #19): what one client waits for a search of each kind of term, what a search
// under load costs everyone else, and whether a deep page of a sparse filter costs what the first does.

const SEARCHES = [
  ['common', TERMS.common],
  ['rare', TERMS.rare],
  ['no match', TERMS.none],
  ['no match, of frequent words', TERMS.nearMiss],
  ['2 characters', TERMS.short],
  ['2 characters, no match', TERMS.shortNone],
] as const;
export const SEARCH_CLIENTS = 10;
export const SPARSE_FILTER = 'scope=public&category=AMD&isServerless=true';
/** The page of the sparse filter timed against its first (or its last page, when it has fewer). */
export const DEEP_PAGE = 50;

const searchPath = (term: string) => `/v1/templates?includePublicTemplates=true&q=${encodeURIComponent(term)}&limit=100`;
const nextOf = (link: string | null) => (link ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined);

/**
 * The search scenarios, each as a row of figures: `searcher` (a key with no templates of its own) searches; `reader`
 * reads by id, as the scale run's GET does.
 */
export async function searchScenarios(server: Measured, searcher: string, reader: string, total: number): Promise<Figures[]> {
  const url = server.url;
  const out: Figures[] = [];
  // One client, one search after another: what a user waits for.
  for (const [kind, term] of SEARCHES) {
    const first = await timedGet(`${url}${searchPath(term)}`, searcher);
    if (first.status !== 200) throw new Error(`search ${term}: ${first.status} ${first.body}`);
    const found = (JSON.parse(first.body) as unknown[]).length;
    out.push(
      await load(`search "${term}" (${kind}; ${found} on page 1), 1 client`, server, [{ path: searchPath(term) }], searcher, {
        connections: 1,
      }),
    );
  }

  // Searches of the rare term by several clients at once, while 50 connections read templates by id.
  const headers = (key: string) => ({ authorization: `Bearer ${key}` });
  const gets = seededIds(500, total, SETTINGS.large).map((id) => ({ path: `/v1/templates/${id}?includePublicTemplates=true` }));
  const run = (seconds: number) =>
    Promise.all([
      autocannon({
        url,
        connections: SEARCH_CLIENTS,
        duration: seconds,
        headers: headers(searcher),
        requests: [{ path: searchPath(TERMS.rare) }],
      }),
      autocannon({ url, connections: 50, duration: seconds, headers: headers(reader), requests: gets }),
    ]);
  await run(SETTINGS.warmup);
  const [searching, reading] = await run(SETTINGS.duration);
  out.push(figures(`search "${TERMS.rare}", ${SEARCH_CLIENTS} clients, while 50 connections GET by id`, searching));
  out.push(figures(`GET /v1/templates/{id}, 50 connections, while ${SEARCH_CLIENTS} clients search`, reading));

  // A sparse filter: its first page, and its page DEEP_PAGE reached by following the links, timed in turns.
  const pages = [`/v1/templates?${SPARSE_FILTER}&limit=100`];
  while (pages.length < DEEP_PAGE) {
    const page = await timedGet(`${url}${pages.at(-1)}`, searcher);
    if (page.status !== 200) throw new Error(`sparse filter: ${page.status} ${page.body}`);
    const next = nextOf(page.headers.get('link'));
    if (!next) break;
    pages.push(next);
  }
  const times: number[][] = [[], []];
  let failed = 0;
  for (let i = 0; i < SETTINGS.pageTimings + 3; i++) {
    for (const [j, path] of [pages[0], pages.at(-1)].entries()) {
      const r = await timedGet(`${url}${path}`, searcher);
      if (r.status !== 200) failed++;
      if (i >= 3) times[j]?.push(r.ms);
    }
  }
  for (const [j, label] of ['page 1', `page ${pages.length}${pages.length < DEEP_PAGE ? ' (the last)' : ''}`].entries()) {
    const sorted = (times[j] as number[]).sort((a, b) => a - b);
    const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
    out.push({
      name: `sparse filter (${SPARSE_FILTER}), ${label}, 1 client`,
      rps: 1000 / mean,
      p50: Math.round(quantile(sorted, 0.5) * 10) / 10,
      p99: Math.round(quantile(sorted, 0.99) * 10) / 10,
      errors: failed,
      serverErrors: 0,
    });
  }
  return out;
}
