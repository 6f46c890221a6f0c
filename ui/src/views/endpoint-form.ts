import { ApiError, api } from '../api.ts';
import { h, show, uid } from '../dom.ts';
import { guardUnsaved, releaseGuard } from '../guard.ts';
import type { Endpoint, Template } from '../model.ts';
import { go, href } from '../router.ts';
import { confirmDialog, problemBox } from './common.ts';
import type { View } from './view.ts';

// A Serverless endpoint's form: a name, one of the caller's Serverless templates not bound yet, and its workers.
// New (#/endpoints/new?template=<id>) it creates one; with an id (#/e/<id>/edit) it is filled in from the endpoint and
// saves with PATCH, asking first when another template is chosen, as a rebind starts a rolling release. As in the
// template form, the API judges the values and its errors go next to the fields.

const number = (text: string): number | string => (/^\s*\d+\s*$/.test(text) ? Number(text) : text);

export const endpointFormView =
  (id: string | undefined): View =>
  async ({ route, container, alive, announce }) => {
    const editing = id !== undefined;
    let templates: Template[];
    let endpoint: Endpoint | undefined;
    try {
      // The API lists a caller's bound templates only when asked: these are the ones free to bind.
      const [free, read] = await Promise.all([api.templates({ isServerless: true, limit: 100 }), editing ? api.endpoint(id) : undefined]);
      endpoint = read;
      templates = free.items.filter((t) => !t.isPlatform);
      // An endpoint may keep its own template: it comes first.
      if (endpoint) templates = [(await api.template(endpoint.templateId)).value, ...templates];
    } catch (error) {
      if (alive()) show(container, h('h1', {}, editing ? 'Edit endpoint' : 'New endpoint'), problemBox(error));
      return;
    }
    if (!alive()) return;
    const chosen = endpoint?.templateId ?? route.query.get('template') ?? '';
    const back = endpoint ? href(`/e/${encodeURIComponent(endpoint.id)}`) : href('/endpoints');

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
    const name = h('input', { name: 'name', autocomplete: 'off', maxlength: 255, required: true, value: endpoint?.name ?? '' });
    const template = h(
      'select',
      { name: 'templateId' },
      endpoint ? null : h('option', { value: '' }, templates.length ? 'Choose a template' : 'No Serverless template of yours is free'),
      templates.map((t) => h('option', { value: t.id }, t.name)),
    );
    template.value = templates.some((t) => t.id === chosen) ? chosen : '';
    const workersMin = h('input', { name: 'workersMin', inputmode: 'numeric', value: String(endpoint?.workersMin ?? 0) });
    const workersMax = h('input', { name: 'workersMax', inputmode: 'numeric', value: String(endpoint?.workersMax ?? 3) });
    const values = () => JSON.stringify([name.value, template.value, workersMin.value, workersMax.value]);
    const unchanged = values();
    guardUnsaved(() => values() !== unchanged);

    const summary = h('div', { class: 'summary', tabindex: '-1', 'aria-live': 'assertive' });
    const save = h('button', { type: 'submit' }, editing ? 'Save changes' : 'Create endpoint');
    const form = h(
      'form',
      { class: 'card narrow', novalidate: true },
      summary,
      field('/name', 'Name', name),
      field(
        '/templateId',
        'Template',
        template,
        endpoint
          ? 'Its template, or a Serverless template of yours that no endpoint runs yet: another one starts a rolling release.'
          : 'A Serverless template of yours that no endpoint runs yet.',
      ),
      field('/workersMin', 'Workers kept running', workersMin),
      field('/workersMax', 'Most workers at once', workersMax),
      h('div', { class: 'actions' }, save, h('a', { class: 'button secondary', href: back }, 'Cancel')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      summary.replaceChildren();
      for (const { control, message } of slots.values()) {
        message.textContent = '';
        control.removeAttribute('aria-invalid');
      }
      const body = {
        name: name.value,
        templateId: template.value,
        workersMin: number(workersMin.value),
        workersMax: number(workersMax.value),
      };
      // A rebind replaces the endpoint's workers: say so, and ask.
      if (endpoint && body.templateId !== endpoint.templateId) {
        const to = templates.find((t) => t.id === body.templateId)?.name ?? body.templateId;
        const ok = await confirmDialog(
          `Rebind ${endpoint.name} to ${to}?`,
          'Save and start the release',
          h(
            'p',
            {},
            `Saving starts a rolling release on endpoint ${endpoint.name}: its workers are replaced one by one with `,
            `template ${to}, and the template it runs now is unbound.`,
          ),
        );
        if (!ok || !alive()) return;
      }
      save.disabled = true;
      try {
        const saved = endpoint ? await api.updateEndpoint(endpoint.id, body) : await api.createEndpoint(body);
        if (!alive()) return;
        releaseGuard();
        announce(endpoint ? `Saved endpoint ${saved.name}.` : `Created endpoint ${saved.name}.`);
        go(href(`/e/${encodeURIComponent(saved.id)}`));
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
        save.disabled = false;
      }
    });
    show(
      container,
      h('p', { class: 'crumbs' }, h('a', { href: back }, endpoint ? `← Endpoint ${endpoint.name}` : '← Endpoints')),
      h('h1', {}, endpoint ? `Edit ${endpoint.name}` : 'New endpoint'),
      form,
    );
  };
