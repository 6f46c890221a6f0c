import { api, type Page } from '../api.ts';
import { h, show, when } from '../dom.ts';
import type { Endpoint, Release } from '../model.ts';
import { href } from '../router.ts';
import { morePager, problemBox } from './common.ts';
import { diffTable } from './history.ts';
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
  const addRows = (items: Endpoint[]) =>
    rows.append(
      ...items.map((e) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, h('a', { href: href(`/e/${encodeURIComponent(e.id)}`) }, e.name)),
          h('td', {}, h('a', { href: href(`/t/${encodeURIComponent(e.templateId)}`) }, h('code', {}, e.templateId))),
          h('td', {}, `${e.workersMin}–${e.workersMax}`),
          h('td', {}, String(e.version)),
        ),
      ),
    );
  addRows(page.items);
  const more = morePager(page.next, api.endpointsAt, addRows, 'More endpoints');
  show(
    container,
    h('h1', {}, 'Endpoints'),
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

function release(r: Release): HTMLElement {
  const delivery = r.delivery.deliveredAt
    ? `webhook delivered ${when(r.delivery.deliveredAt)}`
    : `webhook not delivered yet (${r.delivery.attempts} attempt${r.delivery.attempts === 1 ? '' : 's'}${r.delivery.lastError ? `, last error: ${r.delivery.lastError}` : ''})`;
  return h(
    'li',
    { class: 'card release' },
    h('div', { class: 'heading' }, h('h2', {}, `Version ${r.version}`), h('span', { class: `status status-${r.status}` }, r.status)),
    h('p', {}, `Template revision ${r.templateRevision} · created ${when(r.createdAt)}`),
    h(
      'p',
      {},
      h('label', { for: `progress-${r.id}` }, `Workers updated: ${r.workersUpdated} of ${r.workersTotal} `),
      h('progress', { id: `progress-${r.id}`, max: Math.max(r.workersTotal, 1), value: r.workersUpdated }),
    ),
    h('p', { class: 'muted' }, delivery),
    r.diff.length ? diffTable(r.diff, `Changes in version ${r.version}`) : null,
  );
}

export const endpointView =
  (id: string): View =>
  async ({ container, alive }) => {
    let endpoint: Endpoint;
    let releases: Page<Release>;
    let templateName: string | undefined;
    try {
      [endpoint, releases] = await Promise.all([api.endpoint(id), api.releases(id)]);
      templateName = await api.template(endpoint.templateId).then(
        (t) => t.value.name,
        () => undefined,
      );
    } catch (error) {
      if (alive()) show(container, h('h1', {}, 'Endpoint'), problemBox(error));
      return;
    }
    if (!alive()) return;
    const list = h('ol', { class: 'releases', reversed: true }, releases.items.map(release));
    const more = morePager(releases.next, api.releasesAt, (items) => list.append(...items.map(release)), 'Older releases');
    show(
      container,
      h('p', { class: 'crumbs' }, h('a', { href: href('/endpoints') }, '← Endpoints')),
      h('h1', {}, `Endpoint ${endpoint.name}`),
      h(
        'dl',
        { class: 'fields' },
        h('dt', {}, 'Template'),
        h(
          'dd',
          {},
          h('a', { href: href(`/t/${encodeURIComponent(endpoint.templateId)}`) }, templateName ?? h('code', {}, endpoint.templateId)),
        ),
        h('dt', {}, 'Workers'),
        h('dd', {}, `${endpoint.workersMin} to ${endpoint.workersMax}`),
        h('dt', {}, 'Version'),
        h('dd', {}, String(endpoint.version)),
      ),
      h('h2', {}, 'Releases'),
      releases.items.length ? list : h('p', { class: 'muted' }, 'No releases yet: a change to the template makes one.'),
      more,
    );
  };
