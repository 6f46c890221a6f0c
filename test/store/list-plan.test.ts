import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { seedTemplates } from '../../bench/seed.ts';
import type { ListPosition } from '../../src/domain/page.ts';
import { dialectFor } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import type { TemplateQuery } from '../../src/store/templates/list.ts';
import { SEARCH_ATTEMPT_MS, SEARCH_WORK_MAX, WALK_ROWS } from '../../src/store/templates/templates.ts';
import { type Database, forEachDialect, freshDatabase } from '../support/harness.ts';
import { at, templateRecord } from '../support/records.ts';

// A list page reads each visibility scope down its own index, whatever the data's shape. The shape that once
// fooled PostgreSQL: an account holding a few percent of all templates, none of them among the newest. The plan
// then walked the table backwards by `seq`, filtering on the owner, through every newer template to reach its own.

const OLD = 1_400;
const TOTAL = 20_000;
const query: TemplateQuery = {
  visibility: { ownerId: 'acc_z_big', bound: false, public: true, platform: true, platformKey: false },
  limit: 100,
};

forEachDialect('the plan of a list page', (dialect) => {
  let db: Database;
  let store: Store;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    for (const id of ['acc_z_big', 'acc_a_others'])
      await store.transaction((tx) => tx.accounts.ensure({ id, name: id, role: 'user', createdAt: at }));
    // A few of everyone else's templates, then the big account's, then many more of everyone else's (all public,
    // as the seeder writes them). With the big account's id sorting last, the order on disk says little of the
    // owner (PostgreSQL's correlation is about 0.6), as in a real registry: that is when the bad plan was chosen.
    await seedTemplates(db.url, 'acc_a_others', 0, 500);
    await seedTemplates(db.url, 'acc_z_big', 500, 500 + OLD);
    await seedTemplates(db.url, 'acc_a_others', 500 + OLD, TOTAL);
    // As a running service finds them: PostgreSQL's autovacuum keeps statistics; SQLite has none (Podplate runs no ANALYZE).
    if (dialect === 'postgres') await sqlOn(db.url, 'analyze templates');
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  test('each scope is read down its own index: a page examines about a page of rows per scope, not the table', async () => {
    const page = await store.templates.list(query);
    assert.equal(page.items.length, 100);
    const { sql, parameters } = await store.templates.listSql({ ...query, before: page.next });
    for (const q of [await store.templates.listSql(query), { sql, parameters }]) {
      if (dialect === 'postgres') {
        const [row] = await sqlOn(db.url, `explain (analyze, format json) ${q.sql}`, q.parameters);
        const examined = rowsExamined((row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
        assert.ok(examined < 1_000, `examined ${examined} rows for a page of 100 out of ${TOTAL}`);
      } else {
        // Each scope (own, official, community, in that order) is one search down its index, with no sort of its own.
        const { walks, text } = await walksOfPlan(db.url, q);
        assert.deepEqual(
          walks.map((steps) => steps.map((step) => step.replace(/ \(.*\)$/, ''))),
          ['templates_owner_seq', 'templates_platform_seq', 'templates_public_seq'].map((index) => [
            `SEARCH templates USING INDEX ${index}`,
          ]),
          text,
        );
      }
    }
  });
});

forEachDialect('the plan of a page of one scope', (dialect) => {
  let db: Database;
  let store: Store;
  const visibility = { ownerId: 'acc_z_big', bound: false, public: false, platform: false, platformKey: false };
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    for (const [id, role] of [
      ['acc_z_big', 'user'],
      ['acc_a_others', 'user'],
      ['acc_p', 'platform'],
    ] as const)
      await store.transaction((tx) => tx.accounts.ensure({ id, name: id, role, createdAt: at }));
    // Official templates are few, and (public too) they stay out of the way of the public scope's pages.
    await seedTemplates(db.url, 'acc_p', TOTAL, TOTAL + 300, { platform: true });
    await seedTemplates(db.url, 'acc_a_others', 0, 500);
    await seedTemplates(db.url, 'acc_z_big', 500, 500 + OLD);
    await seedTemplates(db.url, 'acc_a_others', 500 + OLD, TOTAL);
    if (dialect === 'postgres') await sqlOn(db.url, 'analyze templates');
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  const INDEX = { own: 'templates_owner_seq', public: 'templates_public_seq', platform: 'templates_platform_seq' } as const;
  for (const scope of ['own', 'public', 'platform'] as const) {
    test(`scope=${scope}: one search down ${INDEX[scope]}, starting at the cursor; a page examines about a page of rows`, async () => {
      const first = await store.templates.list({ visibility, scope, limit: 100 });
      assert.equal(first.items.length, 100);
      const deep = await store.templates.list({ visibility, scope, limit: 100, before: { seq: 5_000 } });
      assert.equal(deep.items.length, 100);
      for (const before of [undefined, first.next, { seq: 5_000 }]) {
        const q = await store.templates.listSql({ visibility, scope, limit: 100, before });
        if (dialect === 'postgres') {
          const [row] = await sqlOn(db.url, `explain (analyze, format json) ${q.sql}`, q.parameters);
          const plan = (row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
          assert.match(JSON.stringify(plan), new RegExp(`"Index Name":"${INDEX[scope]}"`));
          const examined = rowsExamined(plan);
          // The scope's index, the page's rows and their owners: a few times a page; from the top, 15,000 for the deep one.
          assert.ok(examined < 1_000, `examined ${examined} rows for a page of 100 out of ${TOTAL}`);
        } else {
          const { walks, text } = await walksOfPlan(db.url, q);
          // The cursor is the index's start point: it bounds the search (SQLite: the leading column and the rowid).
          assert.equal(walks.length, 1, text);
          const steps = walks[0] as string[];
          assert.equal(steps.length, 1, text);
          assert.match(steps[0] as string, new RegExp(`^SEARCH templates USING INDEX ${INDEX[scope]} \\(`), text);
          if (before !== undefined) assert.match(steps[0] as string, /\(\w+=\? AND seq<\?\)$/, text);
        }
      }
    });
  }
});

forEachDialect('the plan of the check for templates that use a registry auth', (dialect) => {
  let db: Database;
  let store: Store;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    await store.transaction((tx) => tx.accounts.ensure({ id: 'acc_a', name: 'acc_a', role: 'user', createdAt: at }));
    await seedTemplates(db.url, 'acc_a', 0, 5_000);
    for (let i = 0; i < 3; i++)
      await store.transaction((tx) => tx.templates.insert(templateRecord({ containerRegistryAuthId: `auth${i}` })));
    if (dialect === 'postgres') await sqlOn(db.url, 'analyze templates');
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  test('deleting an auth looks only at the templates that name one, down their partial index', async () => {
    assert.equal((await store.templates.referringTo('auth1', 3)).length, 1);
    const q = store.templates.referringToSql('auth1', 3);
    if (dialect === 'postgres') {
      const [row] = await sqlOn(db.url, `explain (analyze, format json) ${q.sql}`, q.parameters);
      const plan = JSON.stringify((row as { 'QUERY PLAN': unknown })['QUERY PLAN']);
      assert.match(plan, /"Index Name":"templates_registry_auth"/);
      const examined = rowsExamined((row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan);
      assert.ok(examined <= 3, `examined ${examined} rows`);
    } else {
      const plan = (await sqlOn(db.url, `explain query plan ${q.sql}`, q.parameters)).map((r) => (r as { detail: string }).detail);
      assert.deepEqual(plan, ['SEARCH templates USING INDEX templates_registry_auth (container_registry_auth_id=?)']);
    }
  });
});

interface PlanNode {
  'Node Type': string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** The plan's scans, one line each: which index, the rows passed on and thrown away (for failure messages). */
function scansOf(node: PlanNode & { 'Index Name'?: string; 'Index Cond'?: string }): string[] {
  const own = node['Node Type'].endsWith('Scan')
    ? [
        `${node['Node Type']} ${node['Index Name'] ?? ''} rows=${node['Actual Rows']}x${node['Actual Loops']} removed=${node['Rows Removed by Filter'] ?? 0} ${node['Index Cond'] ?? ''}`,
      ]
    : [];
  return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
}

/** Rows the plan's scans read from the table: those they passed on, and those their filters threw away. */
function rowsExamined(node: PlanNode): number {
  // A table's or an index's scan, not a scan of a subquery's or a CTE's rows already counted below it.
  const own = /^(Seq|Index|Index Only|Bitmap Heap) Scan$/.test(node['Node Type'])
    ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0)) * node['Actual Loops']
    : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsExamined(child), 0);
}

/**
 * SQLite: each walk of a page's plan (a search of `templates` down an index, in the order of the plan) with the steps
 * of its own part of the query: the searches, scans and sorts between it and the merge of the walks. A walk read as
 * it should be has one step, its search.
 */
async function walksOfPlan(url: string, q: { sql: string; parameters: readonly unknown[] }) {
  const rows = (await sqlOn(url, `explain query plan ${q.sql}`, q.parameters)) as { id: number; parent: number; detail: string }[];
  const byId = new Map(rows.map((row) => [row.id, row]));
  const merge = /^(CO-ROUTINE (visible|candidates|sized)|COMPOUND QUERY|MERGE \(UNION ALL\))$/;
  const armOf = (row: { id: number; parent: number }) => {
    let arm = row;
    for (let up = byId.get(row.parent); up !== undefined && !merge.test(up.detail); up = byId.get(up.parent)) arm = up;
    return arm.id;
  };
  const within = (row: { id: number; parent: number }, top: number): boolean =>
    row.id === top || (byId.has(row.parent) && within(byId.get(row.parent) as (typeof rows)[number], top));
  const walks = rows
    .filter((row) => /^SEARCH templates USING (COVERING )?INDEX /.test(row.detail))
    .map((search) => {
      const arm = armOf(search);
      return rows
        .filter((row) => within(row, arm) && /^(SEARCH templates|SCAN templates|USE TEMP B-TREE)/.test(row.detail))
        .map((row) => row.detail);
    });
  return { walks, text: rows.map((row) => row.detail).join('; ') };
}

async function sqlOn(url: string, text: string, parameters: readonly unknown[] = []): Promise<unknown[]> {
  if (url.startsWith('sqlite:')) {
    const sqlite = new SQLite(url.slice('sqlite:'.length));
    try {
      const statement = sqlite.prepare(text);
      if (statement.reader) return statement.all(...parameters);
      statement.run(...parameters);
      return [];
    } finally {
      sqlite.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, parameters as unknown[])).rows;
  } finally {
    await client.end();
  }
}

forEachDialect('the plan of a search, chosen per term', (dialect) => {
  let db: Database;
  let store: Store;
  const visibility = { ownerId: 'acc_me', bound: false, public: true, platform: false, platformKey: false };
  const SEEDED = 25_000;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    for (const id of ['acc_me', 'acc_a_others'])
      await store.transaction((tx) => tx.accounts.ensure({ id, name: id, role: 'user', createdAt: at }));
    await seedTemplates(db.url, 'acc_a_others', 0, 1_000);
    // Rare: three templates, old enough that a walk from the newest would read nearly every row to reach them.
    for (const name of ['Zebrafish tracker', 'zebrafish-v2', 'ZEBRAFISH lab']) {
      await store.transaction((tx) => tx.templates.insert(templateRecord({ ownerId: 'acc_a_others', name, isPublic: true })));
    }
    await seedTemplates(db.url, 'acc_a_others', 1_000, SEEDED);
    if (dialect === 'postgres') await sqlOn(db.url, 'analyze templates');
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  /** The templates of the public scope holding `search`, counted over every page the Link leads to. */
  async function foundOnEveryPage(search: string): Promise<number> {
    let found = 0;
    let at: ListPosition | undefined;
    do {
      const page = await store.templates.list({ visibility, scope: 'public', search, limit: 100, before: at });
      found += page.items.length;
      at = page.next;
    } while (at !== undefined);
    return found;
  }

  async function planOf(search: string) {
    const q = await store.templates.listSql({ visibility, scope: 'public', search, limit: 100 });
    if (dialect === 'postgres') {
      const [row] = await sqlOn(db.url, `explain (analyze, format json) ${q.sql}`, q.parameters);
      const plan = (row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
      return { text: JSON.stringify(plan), examined: rowsExamined(plan) };
    }
    const plan = (await sqlOn(db.url, `explain query plan ${q.sql}`, q.parameters)).map((r) => (r as { detail: string }).detail);
    return { text: plan.join('; '), examined: 0 };
  }

  test('a rare term is read through the trigram index, not by walking the scope', async () => {
    const page = await store.templates.list({ visibility, scope: 'public', search: 'zebrafish', limit: 100 });
    assert.equal(page.items.length, 3);
    assert.equal(page.next, undefined);
    const { text, examined } = await planOf('zebrafish');
    if (dialect === 'postgres') {
      assert.match(text, /"Index Name":"templates_search_trgm"/);
      assert.ok(examined < 500, `examined ${examined} rows`);
    } else {
      assert.match(text, /SCAN templates_search VIRTUAL TABLE INDEX/);
      assert.doesNotMatch(text, /USING INDEX templates_public_seq/);
    }
    // A term in no row at all is as cheap.
    assert.equal((await store.templates.list({ visibility, scope: 'public', search: 'no such words', limit: 100 })).items.length, 0);
    const none = await planOf('no such words');
    if (dialect === 'postgres') assert.ok(none.examined < 500, `examined ${none.examined} rows`);
    else assert.match(none.text, /SCAN templates_search VIRTUAL TABLE INDEX/);
  });

  test('a term whose every trigram is frequent, in an order no row holds, is found nowhere, page by page', async () => {
    // Every `seeded …` row holds each trigram of "seededed" (see, eed, ede, ded), none the term: a page must not check
    // every row to learn that (SQLite: walked within the row budget, not read through the trigram table).
    let pages = 0;
    let before: ListPosition | undefined;
    do {
      const page = await store.templates.list({ visibility, scope: 'public', search: 'seededed', limit: 100, before });
      assert.deepEqual(page.items, []);
      before = page.next;
      pages++;
    } while (before !== undefined && pages < 100);
    assert.equal(before, undefined, 'the Link ends');
    if (dialect === 'sqlite') {
      assert.equal(pages, Math.ceil((SEEDED + 3) / WALK_ROWS), 'each page walks its budget of rows, until the scope ends');
      assert.doesNotMatch((await planOf('seededed')).text, /templates_search/);
      // A rare trigram anywhere in a term is enough to read it through the trigram table.
      assert.match((await planOf('seeded zebrafish')).text, /SCAN templates_search VIRTUAL TABLE INDEX/);
    }
  });

  // SQLite chooses by counting trigrams (above); PostgreSQL by estimating them from a sample, and its planner chooses
  // within a time.
  if (dialect === 'postgres')
    test('PostgreSQL: a term the trigram index would check too many rows for is walked without trying it', async () => {
      // Every `seeded …` row holds each trigram of "seededed": the index would hand over all 25,000 to be checked.
      assert.equal((await store.templates.searchPlan({ visibility, scope: 'public', search: 'seededed', limit: 100 })).via, 'walk');
      // So does a frequent term (a walk fills its page in about a page of rows); a rare one is looked up.
      assert.equal((await store.templates.searchPlan({ visibility, scope: 'public', search: 'seeded', limit: 100 })).via, 'walk');
      assert.equal((await store.templates.searchPlan({ visibility, scope: 'public', search: 'zebrafish', limit: 100 })).via, 'like');
      // A rare word beside frequent ones: the index skips through the frequent lists to the rare one's rows.
      assert.equal((await store.templates.searchPlan({ visibility, scope: 'public', search: 'seeded zebrafish', limit: 100 })).via, 'like');
      // No trigram at all (no letter or digit): the index cannot serve it.
      assert.equal((await store.templates.searchPlan({ visibility, scope: 'public', search: '-_-', limit: 100 })).via, 'walk');
      // Nor one whose characters are digits to JavaScript but no part of a word to pg_trgm (its index would read
      // every entry, and no statement_timeout stops that).
      assert.equal((await store.templates.searchPlan({ visibility, scope: 'public', search: '²²²²', limit: 100 })).via, 'walk');
      // Walked, the term is still found nowhere, and a found term found, page after page.
      assert.equal(await foundOnEveryPage('seededed'), 0);
      assert.equal(await foundOnEveryPage('zebrafish'), 3);
    });

  if (dialect === 'postgres')
    test('PostgreSQL: a search through the trigram index that runs past its time is walked instead, within the row budget', async () => {
      // 1 ms is far less than checking the scope's rows takes: the attempt is cancelled, and the term walked.
      store.templates.searchAttemptMs = 1;
      store.templates.searchWorkMax = Number.POSITIVE_INFINITY;
      try {
        const first = await store.templates.list({ visibility, scope: 'public', search: 'seededed', limit: 100 });
        assert.deepEqual(first.items, []);
        assert.ok(first.next !== undefined, 'a walked page ends at its budget, and the Link goes on');
        let pages = 1;
        for (let at: ListPosition | undefined = first.next; at !== undefined; pages++) {
          const page = await store.templates.list({ visibility, scope: 'public', search: 'seededed', limit: 100, before: at });
          assert.deepEqual(page.items, []);
          at = page.next;
        }
        assert.equal(pages, Math.ceil((SEEDED + 3) / WALK_ROWS), 'each page walks its budget of rows, until the scope ends');
        // A term some rows hold is found all the same, by the walk, page after page.
        assert.equal(await foundOnEveryPage('zebrafish'), 3);
      } finally {
        store.templates.searchAttemptMs = SEARCH_ATTEMPT_MS;
      }
      // Given the time, the same term is one empty page.
      store.templates.searchAttemptMs = 10_000;
      try {
        const page = await store.templates.list({ visibility, scope: 'public', search: 'seededed', limit: 100 });
        assert.deepEqual([page.items, page.next], [[], undefined]);
      } finally {
        store.templates.searchAttemptMs = SEARCH_ATTEMPT_MS;
        store.templates.searchWorkMax = SEARCH_WORK_MAX;
      }
    });

  test('a frequent term is read down the scope index, a page in about a page of rows', async () => {
    const page = await store.templates.list({ visibility, scope: 'public', search: 'seeded', limit: 100 });
    assert.equal(page.items.length, 100);
    const { text, examined } = await planOf('seeded');
    if (dialect === 'postgres') assert.ok(examined < 1_000, `examined ${examined} rows: ${text}`);
    else assert.match(text, /SEARCH templates USING INDEX templates_public_seq \(is_public=\?( AND seq>\?)?\)/);
  });

  test('a 1- or 2-character term is walked within a row budget: never a lossy scan of the trigram index', async () => {
    const first = await store.templates.list({ visibility, scope: 'public', search: 'zq', limit: 100 });
    // No row holds "zq": the walk stops after its budget, and the next page goes on from there.
    assert.deepEqual(first.items, []);
    assert.ok(first.next !== undefined && first.next.seq > 1, JSON.stringify(first.next));
    let walks = 1;
    for (let at: ListPosition | undefined = first.next; at !== undefined; walks++) {
      const page = await store.templates.list({ visibility, scope: 'public', search: 'zq', limit: 100, before: at });
      assert.deepEqual(page.items, []);
      at = page.next;
    }
    assert.equal(walks, Math.ceil((SEEDED + 3) / WALK_ROWS), 'each page walks its budget of rows, until the scope ends');
    const { text } = await planOf('zq');
    assert.doesNotMatch(text, /templates_search/);
    // A frequent short term fills its page from the top.
    const frequent = await store.templates.list({ visibility, scope: 'public', search: 'ed', limit: 100 });
    assert.equal(frequent.items.length, 100);
    // Every match of a short term is found, page after page: "fi" is in the three rare ones only.
    const found: string[] = [];
    let before: ListPosition | undefined;
    do {
      const page = await store.templates.list({ visibility, scope: 'public', search: 'fi', limit: 2, before });
      found.push(...page.items.map((item) => JSON.parse(item.json).name));
      before = page.next;
    } while (before !== undefined);
    assert.deepEqual(found.sort(), ['ZEBRAFISH lab', 'Zebrafish tracker', 'zebrafish-v2']);
  });
});

// The category and Serverless filters: each combination is read down an index whose leading columns are its
// equalities (migration 0013), from the cursor, so that a deep page of a sparse filter costs what the first does.
// The data: AMD is rare (every 20th template) and, among the community's, only in the oldest fifth; a third of all
// templates are Serverless; runtimes repeat (so the popular order's cursor lands among equal runtimes).
forEachDialect('the plan of a filtered page', (dialect) => {
  let db: Database;
  let store: Store;
  const visibility = { ownerId: 'acc_z_big', bound: false, public: true, platform: true, platformKey: false };
  // Enough of each that PostgreSQL's planner has a real choice: a filter's rows are too many to read and sort.
  const COMMUNITY = 40_000;
  const OFFICIAL = 12_000;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    for (const [id, role] of [
      ['acc_z_big', 'user'],
      ['acc_a_others', 'user'],
      ['acc_p', 'platform'],
    ] as const)
      await store.transaction((tx) => tx.accounts.ensure({ id, name: id, role, createdAt: at }));
    await seedTemplates(db.url, 'acc_a_others', 0, 500);
    await seedTemplates(db.url, 'acc_z_big', 500, 500 + OLD);
    await seedTemplates(db.url, 'acc_a_others', 500 + OLD, COMMUNITY);
    await seedTemplates(db.url, 'acc_p', COMMUNITY, COMMUNITY + OFFICIAL, { platform: true });
    await sqlOn(
      db.url,
      `update templates set
         category = case when seq % 20 = 0 and (seq <= ${COMMUNITY / 5} or seq > ${COMMUNITY}) then 'AMD' when seq % 5 = 1 then 'CPU' else 'NVIDIA' end,
         is_serverless = case when seq % 3 = 0 then 1 else 0 end,
         runtime_in_min = (seq * 7) % 50`,
    );
    if (dialect === 'postgres') await sqlOn(db.url, 'analyze templates');
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  const FILTERS = [
    { category: 'AMD', isServerless: true },
    { category: 'AMD' },
    { isServerless: true },
    { category: 'CPU', isServerless: false },
  ] as const;
  // Each scope and order: the index it is read down, and a cursor deep into it.
  const CASES = [
    { scope: 'own', sort: 'newest', index: 'templates_owner_filters', lead: 'owner_id', deep: { seq: 1_200 } },
    { scope: 'public', sort: 'newest', index: 'templates_public_filters', lead: 'is_public', deep: { seq: COMMUNITY / 2 } },
    {
      scope: 'platform',
      sort: 'newest',
      index: 'templates_platform_filters',
      lead: 'is_platform',
      deep: { seq: COMMUNITY + OFFICIAL / 2 },
    },
    {
      scope: 'public',
      sort: 'popular',
      index: 'templates_public_popular_filters',
      lead: 'is_public',
      deep: { seq: COMMUNITY / 2, runtime: 20 },
    },
    {
      scope: 'platform',
      sort: 'popular',
      index: 'templates_platform_popular_filters',
      lead: 'is_platform',
      deep: { seq: COMMUNITY + OFFICIAL / 2, runtime: 20 },
    },
  ] as const;

  /** The templates of the filter, as the rule says (every visible template of the scope, in the page's order). */
  async function expected(scope: 'own' | 'public' | 'platform', popular: boolean, filter: (typeof FILTERS)[number]) {
    const where = [
      { own: "owner_id = 'acc_z_big'", public: 'is_public = 1 and is_platform = 0', platform: 'is_platform = 1 and is_public = 1' }[scope],
      ...('category' in filter ? [`category = '${filter.category}'`] : []),
      ...('isServerless' in filter ? [`is_serverless = ${filter.isServerless ? 1 : 0}`] : []),
    ].join(' and ');
    const rows = await sqlOn(db.url, `select id from templates where ${where} order by ${popular ? 'runtime_in_min desc, ' : ''}seq desc`);
    return rows.map((row) => (row as { id: string }).id);
  }

  for (const { scope, sort, index, lead, deep } of CASES) {
    for (const filter of FILTERS) {
      const name = `scope=${scope} sort=${sort} ${JSON.stringify(filter)}`;
      test(`${name}: every page is ${index}, searched from the cursor; the deep page reads no more than the first`, async () => {
        const base = { visibility, scope, sort, ...filter };
        // What the pages hold: the filter's templates, in order, each once.
        const seen: string[] = [];
        let next: ListPosition | undefined;
        do {
          const page = await store.templates.list({ ...base, limit: 100, before: next });
          seen.push(...page.items.map((item) => JSON.parse(item.json).id as string));
          next = page.next;
        } while (next !== undefined);
        assert.deepEqual(seen, await expected(scope, sort === 'popular', filter));

        const examined: number[] = [];
        const buffers: number[] = [];
        const plans: string[] = [];
        for (const before of [undefined, deep]) {
          const q = await store.templates.listSql({ ...base, limit: 100, before });
          if (dialect === 'postgres') {
            const [row] = await sqlOn(db.url, `explain (analyze, buffers, format json) ${q.sql}`, q.parameters);
            const plan = (row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
            const text = JSON.stringify(plan);
            // The filter's index; PostgreSQL may read a small filter down the newest-first one and sort it by runtime.
            const scans = scansOf(plan).join('\n');
            assert.match(text, new RegExp(`"Index Name":"${index.replace('_popular', '(_popular)?')}"`), scans);
            // No other index of templates, nor all of it (the owners' names are joined from accounts, which PostgreSQL
            // reads whole once it knows how few rows it has).
            assert.doesNotMatch(
              text,
              /"Index Name":"templates_(public|platform|owner)_(seq|popular)"|"Node Type":"Seq Scan"[^{}]*"Relation Name":"templates"/,
              scans,
            );
            examined.push(rowsExamined(plan));
            buffers.push((plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0));
            plans.push(scans);
          } else {
            const { walks, text } = await walksOfPlan(db.url, q);
            // One search per value of the filters not asked for (and, in the popular order from a cursor, two: the
            // cursor's runtime, then the lower ones), each with no sort of its own.
            const values = ('category' in filter ? 1 : 3) * ('isServerless' in filter ? 1 : 2);
            assert.equal(walks.length, values * (sort === 'popular' && before !== undefined ? 2 : 1), text);
            for (const steps of walks) {
              const plan = [text];
              assert.equal(steps.length, 1, text);
              const order = sort === 'popular' ? ' AND runtime_in_min[=<]\\?' : '';
              const bound = before === undefined ? '' : sort === 'popular' ? '( AND seq<\\?)?' : ' AND seq<\\?';
              assert.match(
                steps[0] as string,
                new RegExp(
                  `^SEARCH templates USING INDEX ${index} \\(${lead}=\\? AND category=\\? AND is_serverless=\\?${before === undefined ? '' : order}${bound}\\)$`,
                ),
                plan.join('; '),
              );
            }
          }
        }
        if (dialect === 'postgres') {
          const [first, deeper] = examined as [number, number];
          assert.ok(
            first < 1_000 && deeper < 1_000,
            `examined ${examined.join(' and ')} rows for a page of 100 out of ${COMMUNITY + OFFICIAL}: ${plans.join('\n\n')}`,
          );
          assert.ok(deeper <= 2 * first + 10, `examined ${deeper} rows for the deep page, ${first} for the first`);
          // Index entries skipped inside the index are no rows, but they are pages read: the first page starts where
          // the filter's entries are, as a deep one does, not at the index's end (every other category's behind it).
          const [firstBuffers, deeperBuffers] = buffers as [number, number];
          assert.ok(firstBuffers <= 2 * deeperBuffers + 20, `the first page read ${firstBuffers} buffers, the deep one ${deeperBuffers}`);
        }
      });
    }
  }

  test('a page of every scope at once, filtered: each scope down its own filter index', async () => {
    const q = await store.templates.listSql({ visibility, isServerless: true, limit: 100, before: { seq: COMMUNITY / 2 } });
    const page = await store.templates.list({ visibility, isServerless: true, limit: 100, before: { seq: COMMUNITY / 2 } });
    assert.equal(page.items.length, 100);
    if (dialect === 'postgres') {
      const [row] = await sqlOn(db.url, `explain (analyze, format json) ${q.sql}`, q.parameters);
      const plan = (row as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
      const text = JSON.stringify(plan);
      for (const index of ['templates_owner_filters', 'templates_platform_filters', 'templates_public_filters'])
        assert.match(text, new RegExp(`"Index Name":"${index}"`), text);
      assert.ok(rowsExamined(plan) < 2_000, `examined ${rowsExamined(plan)} rows`);
    } else {
      const plan = (await sqlOn(db.url, `explain query plan ${q.sql}`, q.parameters)).map((r) => (r as { detail: string }).detail);
      const searches = plan.filter((step) => step.startsWith('SEARCH templates USING INDEX'));
      assert.equal(searches.length, 9, plan.join('; '));
      for (const [i, index] of ['templates_owner_filters', 'templates_platform_filters', 'templates_public_filters'].entries())
        for (const search of searches.slice(3 * i, 3 * i + 3))
          assert.match(
            search,
            new RegExp(`^SEARCH templates USING INDEX ${index} \\(\\w+=\\? AND category=\\? AND is_serverless=\\? AND seq<\\?\\)$`),
          );
      assert.ok(!plan.some((step) => step.startsWith('SCAN templates')), plan.join('; '));
    }
  });
});

// A walk whose rows the scope's rule throws away (here: templates bound to an endpoint, which a caller sees only
// with includeEndpointBoundTemplates) reads at most its row budget on SQLite: the page ends where the walk stopped,
// and the next one goes on from there. Every template still shows, once, in order.
forEachDialect('a walk within its row budget', (dialect) => {
  let db: Database;
  let store: Store;
  const visibility = { ownerId: 'acc_me', bound: false, public: true, platform: false, platformKey: false };
  const BOUND = 25_000;
  before(async () => {
    db = await freshDatabase(dialect);
    store = Store.open(dialectFor(db.url));
    await store.migrate();
    for (const id of ['acc_me', 'acc_a_others', 'acc_bound'])
      await store.transaction((tx) => tx.accounts.ensure({ id, name: id, role: 'user', createdAt: at }));
    await seedTemplates(db.url, 'acc_a_others', 0, 250);
    await seedTemplates(db.url, 'acc_bound', 250, 250 + BOUND);
    await seedTemplates(db.url, 'acc_a_others', 250 + BOUND, 500 + BOUND);
    await sqlOn(db.url, `update templates set endpoint_id = 'ep_' || seq where owner_id = 'acc_bound'`);
    // Few runtimes, many templates each: the popular order's walks go on within a runtime and across them.
    await sqlOn(db.url, `update templates set runtime_in_min = seq % 2`);
    if (dialect === 'postgres') await sqlOn(db.url, 'analyze templates');
  });
  after(async () => {
    await store.close();
    await db.drop();
  });

  test('pages past 25,000 bound templates: each page reads at most WALK_ROWS rows of the index, and misses none', async () => {
    const seen: string[] = [];
    const cursors: (ListPosition | undefined)[] = [undefined];
    for (let next: ListPosition | undefined, first = true; first || next !== undefined; first = false) {
      const page = await store.templates.list({ visibility, scope: 'public', limit: 100, before: next });
      seen.push(...page.items.map((item) => JSON.parse(item.json).id as string));
      next = page.next;
      if (next !== undefined) cursors.push(next);
    }
    const expected = (await sqlOn(db.url, `select id from templates where owner_id = 'acc_a_others' order by seq desc`)).map(
      (row) => (row as { id: string }).id,
    );
    assert.deepEqual(seen, expected);
    if (dialect === 'sqlite') {
      // Between one page's cursor and the next, the walk read no more than its budget (and the page's extra row).
      for (const [i, from] of cursors.entries()) {
        const to = cursors[i + 1];
        if (to === undefined) break;
        const [row] = await sqlOn(db.url, `select count(*) as n from templates where is_public = 1 and seq < ? and seq >= ?`, [
          from?.seq ?? Number.MAX_SAFE_INTEGER,
          to.seq,
        ]);
        assert.ok((row as { n: number }).n <= WALK_ROWS + 101, `page ${i + 1} walked ${(row as { n: number }).n} rows`);
      }
      // The bound templates took pages of their own, each ending at the budget: ⌈25,000 / 10,000⌉ of them at least.
      assert.ok(cursors.length >= 3 + Math.ceil(BOUND / WALK_ROWS), `${cursors.length} pages`);
    }
  });

  test('in the popular order too: every template once, in order, past the bound ones', async () => {
    const seen: string[] = [];
    let pages = 0;
    for (let next: ListPosition | undefined, first = true; first || next !== undefined; first = false, pages++) {
      const page = await store.templates.list({ visibility, scope: 'public', sort: 'popular', limit: 100, before: next });
      seen.push(...page.items.map((item) => JSON.parse(item.json).id as string));
      next = page.next;
    }
    const expected = (
      await sqlOn(db.url, `select id from templates where owner_id = 'acc_a_others' order by runtime_in_min desc, seq desc`)
    ).map((row) => (row as { id: string }).id);
    assert.deepEqual(seen, expected);
    // 5 full pages of templates; on SQLite, each runtime's share of the bound ones (12,500) ends pages early.
    if (dialect === 'sqlite') assert.ok(pages > 5 + 1, `${pages} pages`);
  });

  test('the check of where a short walk stopped is one bounded search down the same index', async () => {
    const deep = { seq: 250 + BOUND };
    const q = await store.templates.listSql({ visibility, scope: 'public', limit: 100, before: deep });
    if (dialect === 'sqlite') {
      const { walks, text } = await walksOfPlan(db.url, q);
      assert.deepEqual(walks, [['SEARCH templates USING INDEX templates_public_seq (is_public=? AND seq<?)']], text);
      const check = store.templates.walkEndsSql({ visibility, scope: 'public', limit: 100, before: deep }, [0], { seq: 200 });
      const plan = (await sqlOn(db.url, `explain query plan ${check.sql}`, check.parameters)).map((r) => (r as { detail: string }).detail);
      assert.deepEqual(
        plan.filter((step) => /^(SEARCH|SCAN) templates|TEMP B-TREE/.test(step)),
        ['SEARCH templates USING COVERING INDEX templates_public_seq (is_public=? AND seq>? AND seq<?)'],
        plan.join('; '),
      );
    }
  });
});
