import { maskTokens } from '../../../src/domain/token-formats.ts';
import { api, type Page, type Versioned } from '../api.ts';
import { h, show, when } from '../dom.ts';
import { type FieldChange, type Revision, showValue, type Template } from '../model.ts';
import { href } from '../router.ts';
import { morePager, problemBox } from './common.ts';
import type { View } from './view.ts';

/** What changed, before and after; values in a well-known token format masked (`hf_••••••••`). */
export function diffTable(diff: FieldChange[], caption: string): HTMLElement {
  return h(
    'table',
    { class: 'diff' },
    h('caption', { class: 'visually-hidden' }, caption),
    h(
      'thead',
      {},
      h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Before'), h('th', { scope: 'col' }, 'After')),
    ),
    h(
      'tbody',
      {},
      diff.map((change) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, change.field),
          h('td', { class: 'from' }, h('del', {}, maskTokens(showValue(change.from)))),
          h('td', { class: 'to' }, h('ins', {}, maskTokens(showValue(change.to)))),
        ),
      ),
    ),
  );
}

/** A template's revisions, newest first, each with its diff and a button to roll back to it. */
export const historyView =
  (id: string): View =>
  async ({ container, alive, announce }) => {
    let template: Versioned<Template>;
    let revisions: Page<Revision>;
    try {
      template = await api.template(id);
      revisions = await api.revisions(id);
    } catch (error) {
      if (alive()) show(container, h('h1', {}, 'History'), problemBox(error));
      return;
    }
    if (!alive()) return;
    const t = template.value;
    const failure = h('div', { 'aria-live': 'assertive' });
    const list = h('ol', { class: 'revisions', reversed: true });

    const rollback = async (revision: number, button: HTMLButtonElement) => {
      button.disabled = true;
      try {
        const after = await api.rollback(t.id, revision, template.etag);
        announce(
          after.value.revision === t.revision
            ? `Revision ${revision} has the same content as the current one: nothing changed.`
            : `Rolled back to revision ${revision}: now revision ${after.value.revision}.`,
        );
        // Redraw with the new revision on top.
        await historyView(id)({ container, alive, announce, route: { path: [], query: new URLSearchParams() } });
        container.querySelector<HTMLElement>('h1')?.focus();
      } catch (error) {
        button.disabled = false;
        show(failure, problemBox(error));
      }
    };

    const item = (r: Revision) => {
      const current = r.revision === t.revision;
      const button = current
        ? null
        : h('button', { type: 'button', class: 'secondary', 'data-revision': r.revision }, `Roll back to revision ${r.revision}`);
      button?.addEventListener('click', () => rollback(r.revision, button));
      return h(
        'li',
        { class: 'card' },
        h(
          'div',
          { class: 'heading' },
          h('h2', {}, `Revision ${r.revision}`, current ? h('span', { class: 'badge' }, 'current') : null),
          button,
        ),
        h('p', { class: 'muted' }, `${when(r.createdAt)} by key `, h('code', {}, r.keyId)),
        r.diff.length ? diffTable(r.diff, `Changes in revision ${r.revision}`) : h('p', {}, r.revision === 1 ? 'Created.' : 'No change.'),
      );
    };
    list.append(...revisions.items.map(item));
    const more = morePager(revisions.next, api.revisionsAt, (items) => list.append(...items.map(item)), 'Older revisions');
    show(
      container,
      h('p', { class: 'crumbs' }, h('a', { href: href(`/t/${encodeURIComponent(t.id)}`) }, `← ${t.name}`)),
      h('h1', {}, `History of ${t.name}`),
      failure,
      list,
      more,
    );
  };
