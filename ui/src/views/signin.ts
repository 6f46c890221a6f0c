import { api, session } from '../api.ts';
import { h, show } from '../dom.ts';
import type { View } from './view.ts';

export const signInView =
  (signedIn: () => void): View =>
  async ({ container, announce }) => {
    const input = h('input', {
      id: 'api-key',
      name: 'apiKey',
      type: 'password',
      autocomplete: 'off',
      spellcheck: 'false',
      required: true,
      'aria-describedby': 'api-key-hint api-key-error',
    });
    const error = h('p', { id: 'api-key-error', class: 'field-error', 'aria-live': 'assertive' });
    const form = h(
      'form',
      { class: 'card narrow', novalidate: true },
      h('div', { class: 'field' }, h('label', { for: 'api-key' }, 'API key'), input),
      h(
        'p',
        { id: 'api-key-hint', class: 'hint' },
        'Paste a key (pp_…). It is kept in this tab only, until you sign out or close it. Make one with ',
        h('code', {}, 'npx podplate keys create --user you'),
        '.',
      ),
      error,
      h('button', { type: 'submit' }, 'Sign in'),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const key = input.value.trim();
      error.textContent = '';
      input.removeAttribute('aria-invalid');
      if (!key) {
        error.textContent = 'Paste an API key.';
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      try {
        await api.check(key);
      } catch (e) {
        error.textContent = e instanceof Error ? e.message : String(e);
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      session.set(key);
      announce('Signed in.');
      signedIn();
    });
    show(container, h('h1', {}, 'Sign in to Podplate'), form);
    input.focus();
  };
