import { maskedEnvValue } from '../../../src/domain/token-formats.ts';
import { ApiError, api, type Page } from '../api.ts';
import { h, show, uid, when } from '../dom.ts';
import type { Secret } from '../model.ts';
import { href } from '../router.ts';
import { morePager, problemBox } from './common.ts';
import type { View } from './view.ts';

// Secrets: the caller's own, by name (set, replace, delete; a value goes to the API once and is never shown again), the
// picker that inserts a reference into a template's env value, and the masked env value with its reveal.

/** The text a template's env holds to refer to the launching account's secret `name`. */
export const reference = (name: string) => `{{ secret.${name} }}`;

export const secretsView: View = async ({ container, alive, announce }) => {
  let page: Page<Secret>;
  try {
    page = await api.secrets();
  } catch (error) {
    if (alive()) show(container, h('h1', {}, 'Secrets'), problemBox(error));
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
      { class: 'secrets' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Name'),
          h('th', { scope: 'col' }, 'Reference'),
          h('th', { scope: 'col' }, 'Updated'),
          h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')),
        ),
      ),
      rows,
    ),
  );
  const empty = h('p', { class: 'muted' }, 'You have no secrets.');
  const refresh = () => {
    const any = rows.children.length > 0;
    table.hidden = !any;
    empty.hidden = any;
  };

  // The form sets a secret: a new name creates it, a name you have replaces its value.
  const nameId = uid('secret-name');
  const valueId = uid('secret-value');
  const nameError = h('p', { class: 'field-error', id: uid('err') });
  const valueError = h('p', { class: 'field-error', id: uid('err') });
  const nameInput = h('input', {
    id: nameId,
    name: 'name',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    maxlength: '255',
    'aria-describedby': nameError.id,
  });
  const valueInput = h('input', {
    id: valueId,
    name: 'value',
    type: 'password',
    required: true,
    autocomplete: 'new-password',
    spellcheck: 'false',
    'aria-describedby': valueError.id,
  });
  const errors: Record<string, [HTMLInputElement, HTMLElement]> = { '/name': [nameInput, nameError], '/value': [valueInput, valueError] };

  const row = (secret: Secret) => {
    const replace = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'aria-label': `Replace ${secret.name}`,
        onclick: () => {
          nameInput.value = secret.name;
          valueInput.value = '';
          valueInput.focus();
        },
      },
      'Replace',
    );
    const remove = h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-label': `Delete ${secret.name}`,
        onclick: async () => {
          if (
            !window.confirm(`Delete the secret ${secret.name}? Templates that refer to it can't be launched by you until it is set again.`)
          )
            return;
          failure.replaceChildren();
          try {
            await api.removeSecret(secret.name);
            tr.remove();
            refresh();
            announce(`Deleted ${secret.name}.`);
          } catch (error) {
            show(failure, problemBox(error));
          }
        },
      },
      'Delete',
    );
    const tr = h(
      'tr',
      { 'data-name': secret.name },
      h('th', { scope: 'row', class: 'name' }, secret.name),
      h('td', {}, h('code', {}, reference(secret.name))),
      h('td', {}, when(secret.updatedAt)),
      h('td', {}, h('div', { class: 'actions' }, replace, remove)),
    );
    return tr;
  };
  rows.append(...page.items.map(row));
  refresh();
  const more = morePager(
    page.next,
    api.secretsAt,
    (items) => {
      rows.append(...items.map(row));
      refresh();
    },
    'More secrets',
  );

  const summary = h('div', { class: 'summary', tabindex: '-1', 'aria-live': 'assertive' });
  const save = h('button', { type: 'submit' }, 'Save secret');
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-labelledby': 'set-secret-h' },
    h('h2', { id: 'set-secret-h' }, 'Set a secret'),
    summary,
    h(
      'div',
      { class: 'field' },
      h('label', { for: nameId }, 'Name'),
      nameInput,
      h('p', { class: 'hint' }, 'Like an environment variable name, for example HF_TOKEN. A name you have already replaces its value.'),
      nameError,
    ),
    h(
      'div',
      { class: 'field' },
      h('label', { for: valueId }, 'Value'),
      valueInput,
      h('p', { class: 'hint' }, 'Stored encrypted and never shown again; put in place of the reference when you launch a template.'),
      valueError,
    ),
    h('div', { class: 'actions' }, save),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    summary.replaceChildren();
    for (const [input, message] of Object.values(errors)) {
      message.textContent = '';
      input.removeAttribute('aria-invalid');
    }
    const name = nameInput.value.trim();
    save.disabled = true;
    try {
      const secret = await api.putSecret(name, valueInput.value);
      if (!alive()) return;
      form.reset();
      rows.querySelector(`tr[data-name="${CSS.escape(secret.name)}"]`)?.remove();
      rows.prepend(row(secret));
      refresh();
      announce(`Saved ${secret.name}: refer to it as ${reference(secret.name)}.`);
    } catch (error) {
      if (!alive()) return;
      const fieldErrors = error instanceof ApiError ? (error.problem.errors ?? []) : [];
      for (const e of fieldErrors) {
        const target = errors[e.path];
        if (!target) continue;
        target[1].textContent = e.message;
        target[0].setAttribute('aria-invalid', 'true');
      }
      show(summary, problemBox(error));
      const first = fieldErrors.map((e) => errors[e.path]).find(Boolean);
      (first?.[0] ?? summary).focus();
    } finally {
      save.disabled = false;
    }
  });

  show(
    container,
    h('h1', {}, 'Secrets'),
    h(
      'p',
      { class: 'hint' },
      'Tokens and passwords your templates need, kept out of the templates themselves. A template’s environment refers to ' +
        'one as {{ secret.NAME }}; when you launch it, your own secret of that name takes its place — also in a public ' +
        'template of somebody else, which never sees it.',
    ),
    failure,
    table,
    empty,
    more,
    form,
  );
};

/**
 * A select that inserts a reference to one of `names` into `input` (at the cursor, or at the end), then calls
 * `changed` with the new value. Without secrets, it says where to add some.
 */
export function secretPicker(names: string[], input: HTMLInputElement, label: string, changed: (value: string) => void): HTMLElement {
  if (names.length === 0) return h('a', { class: 'picker-empty', href: href('/secrets') }, 'Add a secret');
  const select = h(
    'select',
    { class: 'secret-picker', 'aria-label': label },
    h('option', { value: '' }, 'Insert secret…'),
    names.map((name) => h('option', { value: name }, name)),
  );
  select.addEventListener('change', () => {
    const name = select.value;
    if (!name) return;
    const at = input.selectionStart ?? input.value.length;
    const end = input.selectionEnd ?? at;
    const text = reference(name);
    input.value = input.value.slice(0, at) + text + input.value.slice(end);
    changed(input.value);
    select.value = '';
    input.focus();
    input.setSelectionRange(at + text.length, at + text.length);
  });
  return select;
}

/** An env value, wherever one is shown: masked (secret references shown as written), with a reveal of its own. */
export function maskedValue(name: string, value: string): HTMLElement {
  const masked = maskedEnvValue(value);
  const code = h('code', {}, masked);
  if (masked === value) return code;
  const reveal = h('button', { type: 'button', class: 'link reveal', 'aria-pressed': 'false', 'aria-label': `Reveal ${name}` }, 'Reveal');
  reveal.addEventListener('click', () => {
    const shown = reveal.getAttribute('aria-pressed') !== 'true';
    code.textContent = shown ? value : masked;
    reveal.setAttribute('aria-pressed', String(shown));
    reveal.setAttribute('aria-label', `${shown ? 'Hide' : 'Reveal'} ${name}`);
    reveal.textContent = shown ? 'Hide' : 'Reveal';
  });
  return h('span', { class: 'masked' }, code, ' ', reveal);
}

/**
 * A form's env value input, masked as `maskedValue` masks: a password field, but for secret references (shown as
 * written), with a reveal named for the variable `what`. `sync` is for a value set by code (the secret picker).
 */
export function maskedInput(input: HTMLInputElement, what: string): { reveal: HTMLButtonElement; sync: () => void } {
  let shown = false;
  const label = (verb: string) => (what ? `${verb} ${what}` : verb);
  const reveal = h('button', { type: 'button', class: 'link reveal', 'aria-pressed': 'false', 'aria-label': label('Reveal') }, 'Reveal');
  const sync = () => {
    input.type = shown || (input.value !== '' && maskedEnvValue(input.value) === input.value) ? 'text' : 'password';
  };
  reveal.addEventListener('click', () => {
    shown = !shown;
    reveal.setAttribute('aria-pressed', String(shown));
    reveal.setAttribute('aria-label', label(shown ? 'Hide' : 'Reveal'));
    reveal.textContent = shown ? 'Hide' : 'Reveal';
    sync();
  });
  input.addEventListener('input', sync);
  sync();
  return { reveal, sync };
}
