import { releaseState } from '../../../src/domain/release-state.ts';
import { api, type Page } from '../api.ts';
import { h, show, when } from '../dom.ts';
import type { Endpoint, Release, Revision, Template } from '../model.ts';
import { go, href } from '../router.ts';
import { morePager, problemBox } from './common.ts';
import { authorOf, diffTable } from './history.ts';
import type { View } from './view.ts';

export const endpointsView: View = async ({ container, alive }) => {
  let page: Page<Endpoint>;
  try {
    page = await api.endpoints();
  } catch (error) {
    if (alive()) show(container, h('h1', {}, 'Endpoints'), problemBox(error));
    return;
  }
  if (!alive()) return;
  const rows = h('tbody');
  // Each endpoint's template by name (the caller's own: the API binds no other).
  const names = new Map<string, string>();
  const nameTemplates = (items: Endpoint[]) =>
    Promise.all(
      items.map((e) =>
        api.template(e.templateId).then(
          (t) => names.set(e.templateId, t.value.name),
          () => undefined,
        ),
      ),
    );
  await nameTemplates(page.items);
  if (!alive()) return;
  const addRows = (items: Endpoint[]) =>
    rows.append(
      ...items.map((e) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, h('a', { href: href(`/e/${encodeURIComponent(e.id)}`) }, e.name)),
          h(
            'td',
            {},
            h('a', { href: href(`/t/${encodeURIComponent(e.templateId)}`) }, names.get(e.templateId) ?? h('code', {}, e.templateId)),
          ),
          h('td', {}, `${e.workersMin}–${e.workersMax}`),
          h('td', {}, String(e.version)),
        ),
      ),
    );
  addRows(page.items);
  const more = morePager(
    page.next,
    async (url) => {
      const next = await api.endpointsAt(url);
      await nameTemplates(next.items);
      return next;
    },
    addRows,
    'More endpoints',
  );
  show(
    container,
    h('div', { class: 'heading' }, h('h1', {}, 'Endpoints'), h('a', { class: 'button', href: href('/endpoints/new') }, 'New endpoint')),
    page.items.length === 0
      ? h('p', { class: 'muted' }, 'You have no Serverless endpoints.')
      : h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', { scope: 'col' }, 'Name'),
                h('th', { scope: 'col' }, 'Template'),
                h('th', { scope: 'col' }, 'Workers'),
                h('th', { scope: 'col' }, 'Version'),
              ),
            ),
            rows,
          ),
        ),
    more,
  );
};

/** What a release card shows beside the release: the endpoint's other releases, and who made each revision. (The
 * webhook's delivery is shown when the API gives it: to platform keys only.) */
interface ReleaseContext {
  all: Release[];
  authors: Map<number, string>;
}

const capitalised = (text: string) => `${text[0]?.toUpperCase()}${text.slice(1)}`;

/** The webhook's delivery, which the API shows platform keys only. */
function deliveryOf({ delivery }: Release): string | undefined {
  if (!delivery) return undefined;
  if (delivery.deliveredAt) return `webhook delivered ${when(delivery.deliveredAt)}`;
  const attempts = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`;
  return `webhook not delivered yet (${attempts}${delivery.lastError ? `, last error: ${delivery.lastError}` : ''})`;
}

function release(r: Release, { all, authors }: ReleaseContext): HTMLElement {
  const delivery = deliveryOf(r);
  const author = authors.get(r.templateRevision);
  // Workers are counted only once the orchestrator has reported them.
  const reported = r.status === 'rolling' || r.status === 'completed' || r.status === 'failed';
  return h(
    'li',
    { class: 'card release' },
    h('div', { class: 'heading' }, h('h2', {}, `Release ${r.version}`), h('span', { class: `status status-${r.status}` }, r.status)),
    h('p', { class: 'release-state' }, `${capitalised(releaseState(r, all))}.`),
    h('p', {}, `Template revision ${r.templateRevision}${author ? ` by ${author}` : ''} · created ${when(r.createdAt)}`),
    reported
      ? h(
          'p',
          {},
          h('label', { for: `progress-${r.id}` }, `Workers updated: ${r.workersUpdated} of ${r.workersTotal} `),
          h('progress', { id: `progress-${r.id}`, max: Math.max(r.workersTotal, 1), value: r.workersUpdated }),
        )
      : null,
    delivery ? h('p', { class: 'muted' }, delivery) : null,
    r.diff.length ? diffTable(r.diff, `Changes in release ${r.version}`) : null,
  );
}

/** How long the page waits between looks at a release that is still rolling. */
const POLL_MS = 2000;
const unfinished = (r: Release) => r.status === 'pending' || r.status === 'rolling';

/**
 * The template revision the endpoint's workers run: the newest completed release's, else the one it was bound at
 * (the revision before its first release), else, with no release yet, the template's current one.
 */
function runningRevision(releases: Release[], template: Template | undefined): number | undefined {
  const completed = releases.find((r) => r.status === 'completed');
  if (completed) return completed.templateRevision;
  const first = releases.at(-1);
  if (first) return first.templateRevision - 1;
  return template?.revision;
}

export const endpointView =
  (id: string): View =>
  async ({ container, alive, announce }) => {
    let endpoint: Endpoint;
    let releases: Page<Release>;
    let template: Template | undefined;
    /** The template's newest revisions, by number: the image each ran and who made it. */
    const revisions = new Map<number, Revision>();
    try {
      [endpoint, releases] = await Promise.all([api.endpoint(id), api.releases(id)]);
      template = await api.template(endpoint.templateId).then(
        (t) => t.value,
        () => undefined,
      );
      for (const r of await api.revisions(endpoint.templateId).then(
        (page) => page.items,
        () => [],
      ))
        revisions.set(r.revision, r);
    } catch (error) {
      if (alive()) show(container, h('h1', {}, 'Endpoint'), problemBox(error));
      return;
    }
    if (!alive()) return;
    const failure = h('div', { 'aria-live': 'assertive' });
    const running = h('dd', {});
    const version = h('dd', {}, String(endpoint.version));
    const list = h('ol', { class: 'releases', reversed: true });
    const section = h('div', {});
    /** Images by template revision, read from the template's history once each. */
    const images = new Map<number, string | undefined>();
    for (const [n, r] of revisions) images.set(n, r.template.imageName);
    const authors = new Map([...revisions].map(([n, r]) => [n, authorOf(r)]));
    const imageAt = async (revision: number) => {
      if (!images.has(revision))
        images.set(
          revision,
          await api.revision(endpoint.templateId, revision).then(
            (r) => r?.template.imageName,
            () => undefined,
          ),
        );
      return images.get(revision);
    };
    const draw = async (items: Release[], next: string | undefined) => {
      const revision = runningRevision(items, template);
      const image = revision === undefined ? undefined : revision === template?.revision ? template.imageName : await imageAt(revision);
      const rolling = items.find(unfinished);
      if (!alive()) return;
      show(
        running,
        image ? h('code', { class: 'running-image' }, image) : h('span', { class: 'muted' }, 'unknown'),
        revision === undefined ? null : ` (template revision ${revision})`,
        rolling ? h('span', { class: 'muted' }, ` · release ${rolling.version} ${releaseState(rolling, items)}`) : null,
      );
      const context: ReleaseContext = { all: [...items], authors };
      show(
        list,
        items.map((r) => release(r, context)),
      );
      show(
        section,
        items.length ? list : h('p', { class: 'muted' }, 'No releases yet: a change to the template makes one.'),
        morePager(
          next,
          api.releasesAt,
          (more) => {
            context.all.push(...more);
            list.append(...more.map((r) => release(r, context)));
          },
          'Older releases',
        ),
      );
    };
    await draw(releases.items, releases.next);
    if (!alive()) return;

    // While a release rolls, look again every few seconds: its progress and status come from the orchestrator.
    const poll = async () => {
      if (!alive()) return;
      try {
        const [now, page] = await Promise.all([api.endpoint(id), api.releases(id)]);
        if (!alive()) return;
        version.textContent = String(now.version);
        await draw(page.items, page.next);
        if (page.items.some(unfinished)) setTimeout(poll, POLL_MS);
      } catch (error) {
        if (alive()) show(failure, problemBox(error));
      }
    };
    if (releases.items.some(unfinished)) setTimeout(poll, POLL_MS);

    const remove = async () => {
      if (!window.confirm(`Delete the endpoint “${endpoint.name}”? Its template stays, no longer live.`)) return;
      try {
        await api.removeEndpoint(endpoint.id);
        announce(`Deleted endpoint ${endpoint.name}.`);
        go(href('/endpoints'));
      } catch (error) {
        show(failure, problemBox(error));
      }
    };
    show(
      container,
      h('p', { class: 'crumbs' }, h('a', { href: href('/endpoints') }, '← Endpoints')),
      h('h1', {}, `Endpoint ${endpoint.name}`),
      h(
        'div',
        { class: 'actions' },
        h('a', { class: 'button', href: href(`/e/${encodeURIComponent(endpoint.id)}/edit`) }, 'Edit endpoint'),
        h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete endpoint'),
      ),
      failure,
      h(
        'dl',
        { class: 'fields' },
        h('dt', {}, 'ID'),
        h('dd', {}, h('code', {}, endpoint.id)),
        h('dt', {}, 'Template'),
        h(
          'dd',
          {},
          h('a', { href: href(`/t/${encodeURIComponent(endpoint.templateId)}`) }, template?.name ?? h('code', {}, endpoint.templateId)),
        ),
        h('dt', {}, 'Running'),
        running,
        h('dt', {}, 'Workers'),
        h('dd', {}, `${endpoint.workersMin} to ${endpoint.workersMax}`),
        h('dt', {}, 'Version'),
        version,
      ),
      h('h2', {}, 'Releases'),
      section,
    );
  };
