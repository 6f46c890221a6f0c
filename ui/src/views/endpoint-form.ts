import { ApiError, api } from '../api.ts';
import { h, show, uid } from '../dom.ts';
import { guardUnsaved, releaseGuard } from '../guard.ts';
import type { Template } from '../model.ts';
import { go, href } from '../router.ts';
import { problemBox } from './common.ts';
import type { View } from './view.ts';

// A new Serverless endpoint (#/endpoints/new?template=<id>): a name, one of the caller's Serverless templates not
// bound yet, and its workers. As in the template form, the API judges the values and its errors go next to the fields.

const number = (text: string): number | string => (/^\s*\d+\s*$/.test(text) ? Number(text) : text);

export const endpointFormView: View = async ({ route, container, alive, announce }) => {
  let templates: Template[];
  try {
    // The API lists a caller's bound templates only when asked: these are the ones free to bind.
    templates = (await api.templates({ isServerless: true, limit: 100 })).items.filter((t) => !t.isPlatform);
  } catch (error) {
    if (alive()) show(container, h('h1', {}, 'New endpoint'), problemBox(error));
    return;
  }
  if (!alive()) return;
  const chosen = route.query.get('template') ?? '';

  const slots = new Map<string, { control: HTMLElement; message: HTMLElement }>();
  const field = (pointer: string, label: string, control: HTMLInputElement | HTMLSelectElement, hint?: string) => {
    control.id = uid('endpoint');
    const message = h('p', { class: 'field-error', id: uid('err') });
    const hintId = hint ? uid('hint') : undefined;
    control.setAttribute('aria-describedby', [hintId, message.id].filter(Boolean).join(' '));
    slots.set(pointer, { control, message });
    return h(
      'div',
      { class: 'field' },
      h('label', { for: control.id }, label),
      control,
      hint ? h('p', { class: 'hint', id: hintId }, hint) : null,
      message,
    );
  };
  const name = h('input', { name: 'name', autocomplete: 'off', maxlength: 255, required: true });
  const template = h(
    'select',
    { name: 'templateId' },
    h('option', { value: '' }, templates.length ? 'Choose a template' : 'No Serverless template of yours is free'),
    templates.map((t) => h('option', { value: t.id }, t.name)),
  );
  template.value = templates.some((t) => t.id === chosen) ? chosen : '';
  const workersMin = h('input', { name: 'workersMin', inputmode: 'numeric', value: '0' });
  const workersMax = h('input', { name: 'workersMax', inputmode: 'numeric', value: '3' });
  const values = () => JSON.stringify([name.value, template.value, workersMin.value, workersMax.value]);
  const unchanged = values();
  guardUnsaved(() => values() !== unchanged);

  const summary = h('div', { class: 'summary', tabindex: '-1', 'aria-live': 'assertive' });
  const create = h('button', { type: 'submit' }, 'Create endpoint');
  const form = h(
    'form',
    { class: 'card narrow', novalidate: true },
    summary,
    field('/name', 'Name', name),
    field('/templateId', 'Template', template, 'A Serverless template of yours that no endpoint runs yet.'),
    field('/workersMin', 'Workers kept running', workersMin),
    field('/workersMax', 'Most workers at once', workersMax),
    h('div', { class: 'actions' }, create, h('a', { class: 'button secondary', href: href('/endpoints') }, 'Cancel')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    summary.replaceChildren();
    for (const { control, message } of slots.values()) {
      message.textContent = '';
      control.removeAttribute('aria-invalid');
    }
    create.disabled = true;
    try {
      const made = await api.createEndpoint({
        name: name.value,
        templateId: template.value,
        workersMin: number(workersMin.value),
        workersMax: number(workersMax.value),
      });
      if (!alive()) return;
      releaseGuard();
      announce(`Created endpoint ${made.name}.`);
      go(href(`/e/${encodeURIComponent(made.id)}`));
    } catch (error) {
      if (!alive()) return;
      for (const e of error instanceof ApiError ? (error.problem.errors ?? []) : []) {
        const target = slots.get(`/${e.path.split('/')[1] ?? ''}`);
        if (!target) continue;
        target.message.textContent = target.message.textContent ? `${target.message.textContent}; ${e.message}` : e.message;
        target.control.setAttribute('aria-invalid', 'true');
      }
      show(summary, problemBox(error));
      summary.focus();
    } finally {
      create.disabled = false;
    }
  });
  show(container, h('p', { class: 'crumbs' }, h('a', { href: href('/endpoints') }, '← Endpoints')), h('h1', {}, 'New endpoint'), form);
};
