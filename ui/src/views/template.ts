import { api } from '../api.ts';
import { h, show, when } from '../dom.ts';
import { renderMarkdown } from '../markdown.ts';
import type { Template } from '../model.ts';
import { go, href } from '../router.ts';
import { badges, heading, problemBox } from './common.ts';
import { maskedValue } from './secrets.ts';
import type { View } from './view.ts';

const list = (items: string[]) =>
  items.length
    ? h(
        'ol',
        { class: 'plain' },
        items.map((item) => h('li', {}, h('code', {}, item))),
      )
    : h('span', { class: 'muted' }, 'image default');

/** The template's fields; env values masked with a reveal per row when `owned` (others' public templates hold no token). */
function fields(t: Template, authName: string | undefined, owned: boolean): HTMLElement {
  const env = Object.entries(t.env);
  const row = (term: string, ...value: (Node | string)[]) => [h('dt', {}, term), h('dd', {}, ...value)];
  return h(
    'dl',
    { class: 'fields' },
    row('Image', h('code', {}, t.imageName)),
    row('Category', t.category),
    row('Type', t.isServerless ? 'Serverless worker' : 'Pod'),
    row('Visibility', `${t.isPublic ? 'Public' : 'Private'}${t.isPlatform ? ', official' : ''}`),
    row('Container disk', `${t.containerDiskInGb} GB`),
    row('Volume', `${t.volumeInGb} GB at `, h('code', {}, t.volumeMountPath)),
    row(
      'Registry auth',
      ...(t.containerRegistryAuthId
        ? [authName ? `${authName} ` : '', h('code', {}, t.containerRegistryAuthId)]
        : [h('span', { class: 'muted' }, 'none')]),
    ),
    row('Entrypoint', list(t.dockerEntrypoint)),
    row('Start command', list(t.dockerStartCmd)),
    row(
      'Ports',
      t.ports.length
        ? h(
            'ul',
            { class: 'plain inline' },
            t.ports.map((p) => h('li', {}, h('code', {}, p))),
          )
        : h('span', { class: 'muted' }, 'none'),
    ),
    row(
      'Environment',
      env.length
        ? h(
            'table',
            { class: 'env' },
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Value'))),
            h(
              'tbody',
              {},
              env.map(([k, v]) => h('tr', {}, h('td', {}, h('code', {}, k)), h('td', {}, owned ? maskedValue(k, v) : h('code', {}, v)))),
            ),
          )
        : h('span', { class: 'muted' }, 'none'),
    ),
    row('Usage', `${t.runtimeInMin} min, ${t.earned} credits earned`),
    row('Revision', `${t.revision}, changed ${when(t.updatedAt)} (created ${when(t.createdAt)})`),
  );
}

export const detailView =
  (id: string): View =>
  async ({ container, alive, announce }) => {
    let template: Awaited<ReturnType<typeof api.template>>;
    let owned = false;
    let authName: string | undefined;
    try {
      template = await api.template(id);
      // Only the owner may read revisions: that answer says whether to offer edit, history and delete.
      owned = await api.revisions(id, 1).then(
        () => true,
        () => false,
      );
      // Only the owner sees which registry credentials a template uses: their name, when they are the caller's.
      const authId = template.value.containerRegistryAuthId;
      if (owned && authId)
        authName = await api.registryAuth(authId).then(
          (a) => a.name,
          () => undefined,
        );
    } catch (error) {
      if (alive())
        show(container, h('h1', {}, 'Template'), problemBox(error), h('p', {}, h('a', { href: href('/') }, 'Back to templates')));
      return;
    }
    if (!alive()) return;
    const t = template.value;
    const failure = h('div', { 'aria-live': 'assertive' });
    const remove = async () => {
      if (!window.confirm(`Delete the template “${t.name}” and its history?`)) return;
      try {
        await api.remove(t.id, template.etag);
        announce(`Deleted ${t.name}.`);
        go(href('/'));
      } catch (error) {
        show(failure, problemBox(error));
      }
    };
    const readme = h('div', { class: 'readme' });
    if (t.readme.trim()) readme.append(renderMarkdown(t.readme));
    if (!readme.textContent?.trim() && !readme.querySelector('img')) readme.append(h('p', { class: 'muted' }, 'No readme.'));
    show(
      container,
      h('p', { class: 'crumbs' }, h('a', { href: href('/') }, '← Templates')),
      heading(t.name, badges(t)),
      owned
        ? h(
            'div',
            { class: 'actions' },
            h('a', { class: 'button', href: href(`/t/${encodeURIComponent(t.id)}/edit`) }, 'Edit'),
            h('a', { class: 'button secondary', href: href(`/t/${encodeURIComponent(t.id)}/history`) }, 'History'),
            h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete'),
          )
        : null,
      failure,
      h(
        'div',
        { class: 'detail' },
        fields(t, authName, owned),
        h('section', { class: 'card', 'aria-labelledby': 'readme-h' }, h('h2', { id: 'readme-h' }, 'Readme'), readme),
      ),
    );
  };
