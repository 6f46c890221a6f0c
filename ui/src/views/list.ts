import { api, type TemplateQuery } from '../api.ts';
import { h, show, uid } from '../dom.ts';
import { CATEGORIES, type Endpoint, type TemplateListItem } from '../model.ts';
import { go, href } from '../router.ts';
import { badges, liveBadge, problemBox } from './common.ts';
import type { View } from './view.ts';

const TABS = [
  { id: 'mine', label: 'Mine' },
  { id: 'public', label: 'Public' },
  { id: 'official', label: 'Official' },
] as const;
type Tab = (typeof TABS)[number]['id'];
const PAGE_SIZE = 20;

/** What each tab asks the API for: one scope, read down its own index, so that a page is full (short only where it
 * passed more than its row budget of templates it may not show; its Link goes on). */
const TAB_QUERY: Record<Tab, TemplateQuery> = {
  mine: { scope: 'own', includeEndpointBoundTemplates: true },
  public: { scope: 'public', includeEndpointBoundTemplates: true },
  official: { scope: 'platform', includeEndpointBoundTemplates: true },
};

/** Who made a template ("Official" for the platform's: its account's name says nothing), and how much it is used. */
function byline(t: TemplateListItem): string {
  const usage = t.runtimeInMin ? `used ${t.runtimeInMin.toLocaleString()} min` : 'not used yet';
  return `${t.isPlatform ? 'Official' : `by ${t.ownerName}`} · ${usage}`;
}

/** How many templates a search finds on a tab: "3", or "100+" past one page. */
async function matchesOn(tab: Tab, filters: { category: string; kind: string; q: string }): Promise<string> {
  const found = await api.templates({ ...TAB_QUERY[tab], ...queryOf(filters), limit: 100 });
  return `${found.items.length}${found.next ? '+' : ''}`;
}

/** The API's filters for the form's. */
const queryOf = (filters: { category: string; kind: string; q: string }) => ({
  category: filters.category || undefined,
  isServerless: filters.kind ? filters.kind === 'serverless' : undefined,
  q: filters.q || undefined,
});

/** Cursors of the pages before the current one, per filter, for "Previous page". */
const previous = new Map<string, string[]>();
/** Set when a tab is chosen: the list drawn next keeps the focus on its selected tab, not on the heading. */
let focusSelectedTab = false;

export const listView: View = async ({ route, container, alive }) => {
  const q = route.query;
  const tab: Tab = TABS.some((t) => t.id === q.get('tab')) ? (q.get('tab') as Tab) : 'mine';
  const filters = {
    tab,
    category: CATEGORIES.includes(q.get('category') as never) ? (q.get('category') as string) : '',
    kind: q.get('kind') === 'pod' || q.get('kind') === 'serverless' ? (q.get('kind') as string) : '',
    q: q.get('q')?.trim() ?? '',
    // Most used first by default on the tabs of others' templates (the API sorts public and official ones by runtime).
    sort: tab === 'mine' ? '' : q.get('sort') === 'newest' ? 'newest' : 'popular',
  };
  const cursor = q.get('cursor') ?? '';
  const filterKey = JSON.stringify(filters);
  const stack = previous.get(filterKey) ?? [];
  previous.set(filterKey, stack);
  const to = (changes: Partial<typeof filters> & { cursor?: string }) => {
    const next = { ...filters, ...changes };
    // The default order (most used first) stays out of the address.
    return href('/', { ...next, sort: next.sort === 'popular' ? undefined : next.sort });
  };

  // Tabs: arrow keys move between them (and select), Tab leaves the tab list; one tab is in the tab order.
  const tabIds = Object.fromEntries(TABS.map((t) => [t.id, uid('tab')]));
  const panelId = uid('panel');
  const tabButtons = TABS.map((t) =>
    h(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: tabIds[t.id],
        'aria-selected': String(t.id === tab),
        'aria-controls': panelId,
        tabindex: t.id === tab ? '0' : '-1',
        onclick: () => {
          focusSelectedTab = true;
          go(to({ tab: t.id, cursor: undefined }));
        },
      },
      t.label,
    ),
  );
  const tablist = h('div', { role: 'tablist', 'aria-label': 'Which templates', class: 'tabs' }, tabButtons);
  tablist.addEventListener('keydown', (event) => {
    const i = tabButtons.indexOf(document.activeElement as HTMLButtonElement);
    if (i < 0) return;
    const n = tabButtons.length;
    const next = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    tabButtons[next]?.focus();
    tabButtons[next]?.click();
  });

  const category = h(
    'select',
    { id: 'filter-category', name: 'category' },
    h('option', { value: '' }, 'All categories'),
    CATEGORIES.map((c) => h('option', { value: c }, c)),
  );
  category.value = filters.category;
  const kind = h(
    'select',
    { id: 'filter-kind', name: 'kind' },
    h('option', { value: '' }, 'Pods and Serverless'),
    h('option', { value: 'pod' }, 'Pod'),
    h('option', { value: 'serverless' }, 'Serverless'),
  );
  kind.value = filters.kind;
  const sort = h(
    'select',
    { id: 'filter-sort', name: 'sort' },
    h('option', { value: 'popular' }, 'Most used first'),
    h('option', { value: 'newest' }, 'Newest first'),
  );
  sort.value = filters.sort;
  const search = h('input', { id: 'filter-q', name: 'q', type: 'search', value: filters.q, maxlength: 255, placeholder: 'name or image' });
  const apply = () =>
    go(
      to({ category: category.value, kind: kind.value, sort: tab === 'mine' ? '' : sort.value, q: search.value.trim(), cursor: undefined }),
    );
  const filterForm = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter templates' },
    h('div', { class: 'field' }, h('label', { for: 'filter-category' }, 'Category'), category),
    h('div', { class: 'field' }, h('label', { for: 'filter-kind' }, 'Type'), kind),
    tab === 'mine' ? null : h('div', { class: 'field' }, h('label', { for: 'filter-sort' }, 'Sort'), sort),
    h('div', { class: 'field grow' }, h('label', { for: 'filter-q' }, 'Search'), search),
    h('button', { type: 'submit' }, 'Search'),
  );
  filterForm.addEventListener('submit', (event) => {
    event.preventDefault();
    apply();
  });
  category.addEventListener('change', apply);
  kind.addEventListener('change', apply);
  sort.addEventListener('change', apply);

  const panel = h('section', { role: 'tabpanel', id: panelId, 'aria-labelledby': tabIds[tab], class: 'panel' }, h('p', {}, 'Loading…'));
  show(
    container,
    h('div', { class: 'heading' }, h('h1', {}, 'Templates'), h('a', { class: 'button', href: href('/new') }, 'New template')),
    tablist,
    filterForm,
    panel,
  );
  if (focusSelectedTab) {
    focusSelectedTab = false;
    tabButtons[TABS.findIndex((t) => t.id === tab)]?.focus();
  }

  const query = TAB_QUERY[tab];
  let page: Awaited<ReturnType<typeof api.templates>>;
  // Which of the caller's templates run on an endpoint, and which: a badge on the card says so.
  const live = new Map<string, Endpoint>();
  try {
    const endpoints = api.allEndpoints().then(
      (all) => {
        for (const e of all) live.set(e.templateId, e);
      },
      () => undefined,
    );
    page = await api.templates({
      ...query,
      ...queryOf(filters),
      sort: filters.sort === 'popular' ? 'popular' : undefined,
      limit: PAGE_SIZE,
      cursor: cursor || undefined,
    });
    await endpoints;
  } catch (error) {
    if (alive()) show(panel, problemBox(error));
    return;
  }
  if (!alive()) return;
  const items = page.items;
  const nextCursor = page.next ? (new URL(page.next, location.origin).searchParams.get('cursor') ?? undefined) : undefined;
  const pager = h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    cursor
      ? h(
          'button',
          {
            type: 'button',
            onclick: () => {
              go(to({ cursor: stack.pop() || undefined }));
            },
          },
          stack.length ? 'Previous page' : 'First page',
        )
      : null,
    nextCursor
      ? h(
          'button',
          {
            type: 'button',
            onclick: () => {
              stack.push(cursor);
              go(to({ cursor: nextCursor }));
            },
          },
          'Next page',
        )
      : null,
  );
  // A search says what the other tabs hold, each a link to it: an official ComfyUI is one tab over from Public.
  const elsewhere = h('p', { class: 'elsewhere', 'aria-live': 'polite' });
  if (filters.q)
    void Promise.all(
      TABS.filter((t) => t.id !== tab).map(async (t) => {
        const found = await matchesOn(t.id, filters).catch(() => '0');
        if (found === '0') return null;
        return h('a', { href: to({ tab: t.id, cursor: undefined }) }, `${found} match${found === '1' ? '' : 'es'} on ${t.label}`);
      }),
    ).then((links) => {
      const shown = links.filter((link) => link !== null);
      if (alive() && shown.length) show(elsewhere, 'Also: ', ...shown.flatMap((link, i) => (i ? [' · ', link] : [link])));
    });
  show(
    panel,
    elsewhere,
    items.length === 0
      ? h('p', { class: 'muted' }, 'No templates match.')
      : h(
          'ul',
          { class: 'templates', 'aria-label': `${TABS.find((t) => t.id === tab)?.label} templates` },
          items.map((t) =>
            h(
              'li',
              { class: 'template-card' },
              h(
                'a',
                { href: href(`/t/${encodeURIComponent(t.id)}`), class: 'template' },
                h('span', { class: 'name' }, t.name),
                h('code', { class: 'image' }, t.imageName),
                h('span', { class: 'byline' }, byline(t)),
                badges(t),
              ),
              live.has(t.id) ? h('span', { class: 'live-on' }, liveBadge(live.get(t.id) as Endpoint)) : null,
            ),
          ),
        ),
    pager,
  );
};
