import { ApiError, api, type Page } from '../api.ts';
import { h, show, uid, when } from '../dom.ts';
import type { RegistryAuth } from '../model.ts';
import { morePager, problemBox } from './common.ts';
import type { View } from './view.ts';

// Registry credentials: the caller's container registry auths, a form to add one, and removal. A password goes to the
// API once and is never shown again (the API never sends it back).

const LABELS: Record<string, string> = { name: 'Name', username: 'Username', password: 'Password or token' };

export const registryAuthsView: View = async ({ container, alive, announce }) => {
  let page: Page<RegistryAuth>;
  try {
    page = await api.registryAuths();
  } catch (error) {
    if (alive()) show(container, h('h1', {}, 'Registry credentials'), problemBox(error));
    return;
  }
  if (!alive()) return;

  const failure = h('div', { 'aria-live': 'assertive' });
  const rows = h('tbody');
  const table = h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { class: 'registry-auths' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Name'),
          h('th', { scope: 'col' }, 'ID'),
          h('th', { scope: 'col' }, 'Created'),
          h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
        ),
      ),
      rows,
    ),
  );
  const empty = h('p', { class: 'muted' }, 'You have no registry credentials.');
  const refresh = () => {
    const any = rows.children.length > 0;
    table.hidden = !any;
    empty.hidden = any;
  };
  const row = (auth: RegistryAuth) => {
    const remove = h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-label': `Remove ${auth.name}`,
        onclick: async () => {
          if (!window.confirm(`Remove the registry credentials “${auth.name}”?`)) return;
          failure.replaceChildren();
          try {
            await api.removeRegistryAuth(auth.id);
            tr.remove();
            refresh();
            announce(`Removed ${auth.name}.`);
          } catch (error) {
            show(failure, problemBox(error));
          }
        },
      },
      'Remove',
    );
    const tr = h(
      'tr',
      {},
      h('th', { scope: 'row', class: 'name' }, auth.name),
      h('td', {}, h('code', {}, auth.id)),
      h('td', {}, when(auth.createdAt)),
      h('td', {}, remove),
    );
    return tr;
  };
  const addRows = (items: RegistryAuth[]) => {
    rows.append(...items.map(row));
    refresh();
  };
  addRows(page.items);
  const more = morePager(page.next, api.registryAuthsAt, addRows, 'More credentials');

  // The form: each field's error next to it, from the API's problem.
  const errors = new Map<string, { input: HTMLInputElement; message: HTMLElement }>();
  const field = (name: 'name' | 'username' | 'password', attrs: Record<string, string | boolean>, hint?: string) => {
    const inputId = uid(`auth-${name}`);
    const hintId = hint ? uid('hint') : undefined;
    const message = h('p', { class: 'field-error', id: uid('err') });
    const input = h('input', { id: inputId, name, 'aria-describedby': [hintId, message.id].filter(Boolean).join(' '), ...attrs });
    errors.set(`/${name}`, { input, message });
    return h(
      'div',
      { class: 'field' },
      h('label', { for: inputId }, LABELS[name]),
      input,
      hint ? h('p', { class: 'hint', id: hintId }, hint) : null,
      message,
    );
  };
  const summary = h('div', { class: 'summary', tabindex: '-1', 'aria-live': 'assertive' });
  const add = h('button', { type: 'submit' }, 'Add credentials');
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-labelledby': 'add-auth-h' },
    h('h2', { id: 'add-auth-h' }, 'Add credentials'),
    summary,
    field('name', { required: true, autocomplete: 'off', maxlength: '255' }, 'Your name for them, for example “ghcr” or “team ECR”.'),
    field('username', { required: true, autocomplete: 'off', spellcheck: 'false' }, 'The registry user name (for GCR, _json_key).'),
    field(
      'password',
      { required: true, type: 'password', autocomplete: 'new-password', spellcheck: 'false' },
      'Stored encrypted and never shown again; only the platform reads it, to pull your images.',
    ),
    h('div', { class: 'actions' }, add),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    summary.replaceChildren();
    for (const { input, message } of errors.values()) {
      message.textContent = '';
      input.removeAttribute('aria-invalid');
    }
    const value = (name: string) => (errors.get(`/${name}`) as { input: HTMLInputElement }).input.value;
    add.disabled = true;
    try {
      const auth = await api.createRegistryAuth({ name: value('name'), username: value('username'), password: value('password') });
      if (!alive()) return;
      form.reset();
      rows.prepend(row(auth));
      refresh();
      announce(`Added ${auth.name}: choose it as the registry auth of a template.`);
    } catch (error) {
      if (!alive()) return;
      const fieldErrors = error instanceof ApiError ? (error.problem.errors ?? []) : [];
      for (const e of fieldErrors) {
        const target = errors.get(e.path);
        if (!target) continue;
        target.message.textContent = e.message;
        target.input.setAttribute('aria-invalid', 'true');
      }
      show(summary, problemBox(error));
      const first = fieldErrors.map((e) => errors.get(e.path)).find(Boolean);
      (first?.input ?? summary).focus();
    } finally {
      add.disabled = false;
    }
  });

  show(
    container,
    h('h1', {}, 'Registry credentials'),
    h(
      'p',
      { class: 'hint' },
      'Credentials for private container registries. A template of yours names one as its registry auth, and the platform ' +
        'pulls the template’s image with it. Nobody else sees which one a template uses.',
    ),
    failure,
    table,
    empty,
    more,
    form,
  );
};
