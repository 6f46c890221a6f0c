import { maskTokens } from '../../../src/domain/token-formats.ts';
import { api, type Page, type Versioned } from '../api.ts';
import { changeRows, diffOf } from '../diff.ts';
import { h, show, when } from '../dom.ts';
import type { Endpoint, FieldChange, Revision, Template } from '../model.ts';
import { href } from '../router.ts';
import { confirmDialog, endpointRunning, liveBadge, morePager, problemBox } from './common.ts';
import { maskedValue } from './secrets.ts';
import type { View } from './view.ts';

/** A value of a diff: a variable's masked behind a reveal (`Reveal NAME before`), another's with its tokens masked. */
const value = (text: string | undefined, tag: 'del' | 'ins', variable: string | undefined) => {
  if (text === undefined) return h('span', { class: 'muted' }, '(not set)');
  if (variable !== undefined) return h(tag, {}, maskedValue(`${variable} ${tag === 'del' ? 'before' : 'after'}`, text));
  return h(tag, {}, maskTokens(text));
};

/** Who made a revision: the account, and the key's label when it has one ("alice (laptop)"). */
export const authorOf = (r: Pick<Revision, 'author' | 'keyLabel'>) => (r.keyLabel ? `${r.author} (${r.keyLabel})` : r.author);

/** A diff, one row per field by its label in the form, one per environment variable; a variable's values masked with
 * a reveal, others' tokens in a well-known format masked (`hf_••••••••`). */
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
      changeRows(diff).map((row) =>
        h(
          'tr',
          {},
          h('th', { scope: 'row' }, row.label),
          h('td', { class: 'from' }, value(row.from, 'del', row.variable)),
          h('td', { class: 'to' }, value(row.to, 'ins', row.variable)),
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
    let endpoint: Endpoint | undefined;
    try {
      template = await api.template(id);
      [revisions, endpoint] = await Promise.all([api.revisions(id), endpointRunning(id)]);
    } catch (error) {
      if (alive()) show(container, h('h1', {}, 'History'), problemBox(error));
      return;
    }
    if (!alive()) return;
    const t = template.value;
    const failure = h('div', { 'aria-live': 'assertive' });
    const list = h('ol', { class: 'revisions', reversed: true });

    const rollback = async ({ revision, template: content }: Revision, button: HTMLButtonElement) => {
      // A live template's rollback is a release: the endpoint's workers are replaced. Say so, with what changes.
      if (endpoint) {
        const diff = diffOf(t as unknown as Record<string, unknown>, content as unknown as Record<string, unknown>);
        const ok = await confirmDialog(
          `Roll back to revision ${revision}?`,
          'Roll back and start the release',
          h('p', {}, `This starts a rolling release on endpoint ${endpoint.name}: its workers are replaced one by one.`),
          diff.length ? diffTable(diff, `Changes of the rollback to revision ${revision}`) : h('p', {}, 'No field changes.'),
        );
        if (!ok) return;
      }
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
      button?.addEventListener('click', () => rollback(r, button));
      return h(
        'li',
        { class: 'card' },
        h(
          'div',
          { class: 'heading' },
          h('h2', {}, `Revision ${r.revision}`, current ? h('span', { class: 'badge' }, 'current') : null),
          button,
        ),
        h('p', { class: 'muted byline', title: `key ${r.keyId}` }, `${when(r.createdAt)} by ${authorOf(r)}`),
        r.diff.length ? diffTable(r.diff, `Changes in revision ${r.revision}`) : h('p', {}, r.revision === 1 ? 'Created.' : 'No change.'),
      );
    };
    list.append(...revisions.items.map(item));
    const more = morePager(revisions.next, api.revisionsAt, (items) => list.append(...items.map(item)), 'Older revisions');
    show(
      container,
      h('p', { class: 'crumbs' }, h('a', { href: href(`/t/${encodeURIComponent(t.id)}`) }, `← ${t.name}`)),
      h('h1', {}, `History of ${t.name}`),
      endpoint ? h('p', {}, liveBadge(endpoint)) : null,
      failure,
      list,
      more,
    );
  };
