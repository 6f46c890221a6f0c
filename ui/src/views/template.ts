import { api } from '../api.ts';
import { h, show, when } from '../dom.ts';
import { renderMarkdown, scrollToHeadings } from '../markdown.ts';
import type { Endpoint, Template } from '../model.ts';
import { go, href } from '../router.ts';
import { badges, copyButton, endpointRunning, heading, liveBadge, problemBox } from './common.ts';
import { imageCheckCard } from './image-check.ts';
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

/** The template's fields (the environment is shown on its own, below). */
function fields(t: Template, authName: string | undefined): HTMLElement {
  const env = Object.entries(t.env);
  const row = (term: string, ...value: (Node | string)[]) => [h('dt', {}, term), h('dd', {}, ...value)];
  return h(
    'dl',
    { class: 'fields' },
    row('ID', h('code', { class: 'template-id' }, t.id), ' ', copyButton(t.id, 'template ID')),
    row('Image', h('code', {}, t.imageName), ' ', copyButton(t.imageName, 'image')),
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
    row('Environment', env.length ? `${env.length} variable${env.length === 1 ? '' : 's'}, below` : h('span', { class: 'muted' }, 'none')),
    row('Usage', `${t.runtimeInMin} min, ${t.earned} credits earned`),
    row('Revision', `${t.revision}, changed ${when(t.updatedAt)} (created ${when(t.createdAt)})`),
  );
}

/**
 * The environment on its own, the whole width: names and values never squeezed beside the readme. Values are masked
 * with a reveal per row, whoever owns the template: one rule everywhere (secret references are shown as written).
 */
function environment(t: Template): HTMLElement | null {
  const env = Object.entries(t.env);
  if (!env.length) return null;
  const dotenv = env.map(([k, v]) => `${k}=${v}`).join('\n');
  return h(
    'section',
    { class: 'card env-card', 'aria-labelledby': 'env-h' },
    h(
      'div',
      { class: 'heading' },
      h('h2', { id: 'env-h' }, 'Environment variables'),
      copyButton(dotenv, 'environment as NAME=value lines'),
    ),
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'env' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Value'))),
        h(
          'tbody',
          {},
          env.map(([k, v]) => h('tr', {}, h('td', {}, h('code', {}, k)), h('td', {}, maskedValue(k, v)))),
        ),
      ),
    ),
  );
}

/** Each code block of the readme gets a button copying its text. */
function copyableCode(readme: HTMLElement): void {
  readme.querySelectorAll('pre').forEach((pre, i) => {
    const wrap = h('div', { class: 'code-block' });
    pre.replaceWith(wrap);
    wrap.append(pre, copyButton(pre.textContent ?? '', `code block ${i + 1}`));
  });
}

export const detailView =
  (id: string): View =>
  async ({ container, alive, announce }) => {
    let template: Awaited<ReturnType<typeof api.template>>;
    let owned = false;
    let authName: string | undefined;
    let endpoint: Endpoint | undefined;
    try {
      template = await api.template(id);
      // Whether to offer edit, history and delete: asked of the caller's own templates, never with a refused request.
      owned = await api.owns(template.value);
      // Only the owner sees which registry credentials a template uses: their name, when they are the caller's.
      const authId = template.value.containerRegistryAuthId;
      if (owned && authId)
        authName = await api.registryAuth(authId).then(
          (a) => a.name,
          () => undefined,
        );
      // Only the owner's templates can be bound, to one endpoint of theirs.
      if (owned && template.value.isServerless) endpoint = await endpointRunning(id);
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
    const hasReadme = Boolean(readme.textContent?.trim() || readme.querySelector('img'));
    copyableCode(readme);
    scrollToHeadings(readme);
    const path = `/t/${encodeURIComponent(t.id)}`;
    // A bound template can't be deleted (the API answers 409): the button says why instead of failing afterwards.
    const deleteReason = endpoint ? `Endpoint ${endpoint.name} runs this template: delete the endpoint first.` : undefined;
    show(
      container,
      h('p', { class: 'crumbs' }, h('a', { href: href('/') }, '← Templates')),
      heading(t.name, badges(t)),
      endpoint ? h('p', { class: 'live-note' }, liveBadge(endpoint), ' Saving or rolling back starts a rolling release.') : null,
      h(
        'div',
        { class: 'actions' },
        owned ? h('a', { class: 'button', href: href(`${path}/edit`) }, 'Edit') : null,
        h('a', { class: `button${owned ? ' secondary' : ''}`, href: href('/new', { from: t.id }) }, 'Duplicate'),
        owned ? h('a', { class: 'button secondary', href: href(`${path}/history`) }, 'History') : null,
        owned && t.isServerless && !endpoint
          ? h('a', { class: 'button secondary', href: href('/endpoints/new', { template: t.id }) }, 'Create an endpoint')
          : null,
        owned
          ? h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: remove,
                disabled: Boolean(deleteReason),
                'aria-describedby': deleteReason ? 'delete-why' : undefined,
              },
              'Delete',
            )
          : null,
        deleteReason ? h('p', { class: 'hint', id: 'delete-why' }, deleteReason) : null,
      ),
      failure,
      h(
        'div',
        { class: hasReadme ? 'detail' : 'detail single' },
        fields(t, authName),
        hasReadme ? h('section', { class: 'card', 'aria-labelledby': 'readme-h' }, h('h2', { id: 'readme-h' }, 'Readme'), readme) : null,
      ),
      imageCheckCard(t, owned),
      environment(t),
      hasReadme ? null : h('p', { class: 'muted' }, 'No readme.'),
    );
  };
