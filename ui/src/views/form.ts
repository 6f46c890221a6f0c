import { ApiError, api } from '../api.ts';
import { diffOf, FIELD_LABELS } from '../diff.ts';
import { h, show, uid } from '../dom.ts';
import { guardUnsaved, releaseGuard } from '../guard.ts';
import {
  bodyOf,
  CATEGORIES,
  controlFor,
  EMPTY_FORM,
  type Endpoint,
  type FieldError,
  formOf,
  PROTOCOLS,
  type RegistryAuth,
  type Template,
  type TemplateForm,
} from '../model.ts';
import { go, href } from '../router.ts';
import { confirmDialog, endpointRunning, liveBadge, problemBox } from './common.ts';
import { diffTable } from './history.ts';
import { maskedInput, secretPicker } from './secrets.ts';
import type { View } from './view.ts';

// Create and edit: one form for every field. Values are not judged here; the API's problem body names each bad field
// by JSON Pointer, and the message is put next to that field (and listed at the top, each a link to its field).

// The form's labels are the diffs' (one statement in diff.ts); the readme's field says what it is written in.
const LABELS: Record<string, string> = { ...FIELD_LABELS, readme: 'Readme (Markdown)' };

/** Where an error is, in the form's words: "Port 2", "Variable 1", "Start command, argument 3". */
function describe(pointer: string, control: string): string {
  const [, field = '', item] = control.split('/');
  if (field === 'ports' && item !== undefined) return `Port ${Number(item) + 1}`;
  if (field === 'env' && item !== undefined) return `Variable ${Number(item) + 1}`;
  const label = LABELS[field] ?? (pointer || 'Request');
  const [, , index] = pointer.split('/');
  return (field === 'dockerEntrypoint' || field === 'dockerStartCmd') && index !== undefined
    ? `${label}, argument ${Number(index) + 1}`
    : label;
}

/** A field error in the form's terms: a port's number has a field of its own, its protocol is picked from a list. */
const onScreen = (control: string, e: FieldError) =>
  control.startsWith('/ports/') && e.pattern ? 'must be a whole number from 1 to 65535' : e.message;

export const formView =
  (id: string | undefined): View =>
  async ({ route, container, alive, announce }) => {
    const editing = id !== undefined;
    // Duplicate: a new template of the caller's own, filled in from another one (#/new?from=<id>).
    const from = editing ? undefined : (route.query.get('from') ?? undefined);
    let form: TemplateForm = structuredClone(EMPTY_FORM);
    let etag: string | null = null;
    let title = 'New template';
    let current: Template | undefined;
    let endpoint: Endpoint | undefined;
    // The caller's registry credentials, for the registry auth select; without them the select offers none.
    const secrets = api.allSecretNames().catch(() => [] as string[]);
    const auths = api.allRegistryAuths().then(
      (all) => ({ all, error: undefined }),
      (error: unknown) => ({ all: [] as RegistryAuth[], error }),
    );
    if (editing || from) {
      try {
        const [read, live] = await Promise.all([api.template(id ?? (from as string)), editing ? endpointRunning(id) : undefined]);
        current = read.value;
        endpoint = live;
        form = formOf(read.value);
        etag = read.etag;
        title = editing ? `Edit ${read.value.name}` : `Duplicate ${read.value.name}`;
      } catch (error) {
        if (alive()) show(container, h('h1', {}, editing ? 'Edit template' : 'Duplicate template'), problemBox(error));
        return;
      }
      if (!alive()) return;
    }
    const registryAuths = await auths;
    const secretNames = await secrets;
    if (!alive()) return;
    if (from && current) {
      form.name = `${current.name} (copy)`;
      form.isPublic = false;
      // Another account's credentials can't be named by a template of the caller's.
      if (!registryAuths.all.some((a) => a.id === form.containerRegistryAuthId)) form.containerRegistryAuthId = '';
    }
    const unchanged = JSON.stringify(form);
    guardUnsaved(() => JSON.stringify(form) !== unchanged);

    /** Error slots by control pointer ("/name", "/ports/0", "/env/1"), filled after a refused save. */
    const slots = new Map<string, { control: HTMLElement; message: HTMLElement }>();
    const slot = (pointer: string, control: HTMLElement) => {
      const message = h('p', { class: 'field-error', id: uid('err') });
      const describedBy = control.getAttribute('aria-describedby');
      control.setAttribute('aria-describedby', describedBy ? `${describedBy} ${message.id}` : message.id);
      control.dataset.pointer = pointer;
      slots.set(pointer, { control, message });
      return message;
    };

    const text = (key: keyof TemplateForm, attrs: Record<string, string | number | boolean> = {}, hint?: string) => {
      const inputId = uid(key);
      const hintId = hint ? uid('hint') : undefined;
      const input = h('input', { id: inputId, name: key, value: form[key] as string, 'aria-describedby': hintId, ...attrs });
      input.addEventListener('input', () => {
        (form[key] as string) = input.value;
      });
      return h(
        'div',
        { class: 'field' },
        h('label', { for: inputId }, LABELS[key]),
        input,
        hint ? h('p', { class: 'hint', id: hintId }, hint) : null,
        slot(`/${key}`, input),
      );
    };
    const area = (key: 'dockerEntrypoint' | 'dockerStartCmd' | 'readme', rows: number, hint: string) => {
      const areaId = uid(key);
      const hintId = uid('hint');
      const textarea = h('textarea', { id: areaId, name: key, rows, 'aria-describedby': hintId, spellcheck: key === 'readme' });
      textarea.value = form[key];
      textarea.addEventListener('input', () => {
        form[key] = textarea.value;
      });
      return h(
        'div',
        { class: `field ${key === 'readme' ? 'wide' : ''}` },
        h('label', { for: areaId }, LABELS[key]),
        textarea,
        h('p', { class: 'hint', id: hintId }, hint),
        slot(`/${key}`, textarea),
      );
    };
    const check = (key: 'isPublic' | 'isServerless', hint: string, disabled: boolean) => {
      const boxId = uid(key);
      const box = h('input', { id: boxId, name: key, type: 'checkbox', checked: form[key], disabled });
      box.addEventListener('change', () => {
        form[key] = box.checked;
      });
      return h(
        'div',
        { class: 'field check' },
        box,
        h('label', { for: boxId }, LABELS[key]),
        h('p', { class: 'hint' }, hint),
        slot(`/${key}`, box),
      );
    };

    const authSelectId = uid('containerRegistryAuthId');
    const authHintId = uid('hint');
    const authSelect = h(
      'select',
      { id: authSelectId, name: 'containerRegistryAuthId', 'aria-describedby': authHintId },
      h('option', { value: '' }, 'None (a public image)'),
      registryAuths.all.map((a) => h('option', { value: a.id }, a.name)),
      // A value from before registry auths were checked, or one that is gone: shown, so that saving says what is wrong.
      form.containerRegistryAuthId && !registryAuths.all.some((a) => a.id === form.containerRegistryAuthId)
        ? h('option', { value: form.containerRegistryAuthId }, `${form.containerRegistryAuthId} (not one of your registry credentials)`)
        : null,
    );
    authSelect.value = form.containerRegistryAuthId;
    authSelect.addEventListener('change', () => {
      form.containerRegistryAuthId = authSelect.value;
    });
    const authField = h(
      'div',
      { class: 'field' },
      h('label', { for: authSelectId }, LABELS.containerRegistryAuthId),
      authSelect,
      h(
        'p',
        { class: 'hint', id: authHintId },
        registryAuths.error ? 'Your registry credentials could not be loaded. ' : 'Credentials to pull a private image: ',
        h('a', { href: href('/registry') }, 'add them under Registry credentials'),
        '.',
      ),
      slot('/containerRegistryAuthId', authSelect),
    );

    const categoryId = uid('category');
    const category = h(
      'select',
      { id: categoryId, name: 'category', disabled: editing },
      CATEGORIES.map((c) => h('option', { value: c }, c)),
    );
    category.value = form.category;
    category.addEventListener('change', () => {
      form.category = category.value;
    });

    // Rows: env as name/value pairs, ports as number + protocol. Redrawn on add and remove; edits update `form`.
    const envRows = h('div', { class: 'rows' });
    const portRows = h('div', { class: 'rows' });
    const drawEnv = (focusRow?: number) => {
      for (const key of [...slots.keys()]) if (key.startsWith('/env/')) slots.delete(key);
      show(
        envRows,
        form.env.length === 0 ? h('p', { class: 'muted' }, 'No variables.') : null,
        form.env.map((row, i) => {
          const nameId = uid('env-name');
          const valueId = uid('env-value');
          const name = h('input', { id: nameId, value: row.key, autocomplete: 'off', spellcheck: 'false', class: 'env-name' });
          const value = h('input', { id: valueId, value: row.value, autocomplete: 'off', spellcheck: 'false', class: 'env-value' });
          name.addEventListener('input', () => {
            row.key = name.value;
          });
          value.addEventListener('input', () => {
            row.value = value.value;
          });
          // Named by the variable: "Value 1" is the input's label, and must name nothing else.
          const masking = maskedInput(value, row.key);
          return h(
            'div',
            { class: 'row', role: 'group', 'aria-label': `Variable ${i + 1}` },
            h('div', { class: 'field' }, h('label', { for: nameId }, `Name ${i + 1}`), name),
            h('div', { class: 'field grow' }, h('label', { for: valueId }, `Value ${i + 1}`), value),
            masking.reveal,
            secretPicker(secretNames, value, `Insert a secret into value ${i + 1}`, (text) => {
              row.value = text;
              masking.sync();
            }),
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `Remove variable ${i + 1}`,
                onclick: () => {
                  form.env.splice(i, 1);
                  drawEnv();
                  addEnv.focus();
                },
              },
              'Remove',
            ),
            slot(`/env/${i}`, name),
          );
        }),
      );
      if (focusRow !== undefined) envRows.querySelectorAll<HTMLInputElement>('.env-name')[focusRow]?.focus();
    };
    const drawPorts = (focusRow?: number) => {
      for (const key of [...slots.keys()]) if (key.startsWith('/ports/')) slots.delete(key);
      show(
        portRows,
        form.ports.length === 0 ? h('p', { class: 'muted' }, 'No ports.') : null,
        form.ports.map((row, i) => {
          const portId = uid('port');
          const protocolId = uid('protocol');
          const port = h('input', { id: portId, value: row.port, inputmode: 'numeric', autocomplete: 'off', class: 'port' });
          const protocol = h(
            'select',
            { id: protocolId, class: 'protocol' },
            PROTOCOLS.map((p) => h('option', { value: p }, p)),
          );
          protocol.value = row.protocol;
          port.addEventListener('input', () => {
            row.port = port.value;
          });
          protocol.addEventListener('change', () => {
            row.protocol = protocol.value;
          });
          return h(
            'div',
            { class: 'row' },
            h('div', { class: 'field' }, h('label', { for: portId }, `Port ${i + 1}`), port),
            h('div', { class: 'field' }, h('label', { for: protocolId }, `Protocol ${i + 1}`), protocol),
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': `Remove port ${i + 1}`,
                onclick: () => {
                  form.ports.splice(i, 1);
                  drawPorts();
                  addPort.focus();
                },
              },
              'Remove',
            ),
            slot(`/ports/${i}`, port),
          );
        }),
      );
      if (focusRow !== undefined) portRows.querySelectorAll<HTMLInputElement>('.port')[focusRow]?.focus();
    };
    const addEnv = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          form.env.push({ key: '', value: '' });
          drawEnv(form.env.length - 1);
        },
      },
      'Add variable',
    );
    const addPort = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          form.ports.push({ port: '', protocol: 'http' });
          drawPorts(form.ports.length - 1);
        },
      },
      'Add port',
    );
    drawEnv();
    drawPorts();
    const envSet = h('fieldset', { class: 'wide' }, h('legend', {}, LABELS.env), envRows, addEnv);
    const portSet = h('fieldset', { class: 'wide' }, h('legend', {}, LABELS.ports), portRows, addPort);
    const envError = slot('/env', envSet);
    const portsError = slot('/ports', portSet);
    envSet.insertBefore(envError, addEnv);
    portSet.insertBefore(portsError, addPort);

    const summary = h('div', { class: 'summary', tabindex: '-1', 'aria-live': 'assertive' });
    const save = h('button', { type: 'submit' }, editing ? 'Save changes' : 'Create template');
    const element = h(
      'form',
      { class: 'template-form', novalidate: true },
      summary,
      text('name', { required: true, autocomplete: 'off', maxlength: 255 }),
      text('imageName', { required: true, autocomplete: 'off', spellcheck: 'false' }, 'For example runpod/pytorch:2.1.0-py3.10'),
      h(
        'div',
        { class: 'field' },
        h('label', { for: categoryId }, LABELS.category),
        category,
        editing ? h('p', { class: 'hint' }, 'Fixed after creation.') : null,
        slot('/category', category),
      ),
      check('isServerless', editing ? 'Fixed after creation.' : 'Unchecked: a Pod template.', editing),
      check('isPublic', 'Anyone can use a public template.', false),
      text('containerDiskInGb', { inputmode: 'numeric' }),
      text('volumeInGb', { inputmode: 'numeric' }),
      text('volumeMountPath', { spellcheck: 'false' }),
      authField,
      area('dockerEntrypoint', 3, 'One argument per line; empty keeps the image’s own.'),
      area('dockerStartCmd', 3, 'One argument per line; empty keeps the image’s own.'),
      envSet,
      portSet,
      area('readme', 10, 'Markdown, shown when the template is selected.'),
      h(
        'div',
        { class: 'actions wide' },
        save,
        h('a', { class: 'button secondary', href: editing ? href(`/t/${encodeURIComponent(id)}`) : href('/') }, 'Cancel'),
      ),
    );

    const clearErrors = () => {
      summary.replaceChildren();
      for (const { control, message } of slots.values()) {
        message.textContent = '';
        control.removeAttribute('aria-invalid');
      }
    };
    const showErrors = (error: unknown) => {
      const fieldErrors: FieldError[] = error instanceof ApiError ? (error.problem.errors ?? []) : [];
      const listed = fieldErrors.map((e) => {
        const control = controlFor(e.path, form);
        const target = slots.get(control);
        const message = onScreen(control, e);
        const text = `${describe(e.path, control)}: ${message}`;
        if (target) {
          target.message.textContent = target.message.textContent ? `${target.message.textContent}; ${message}` : message;
          target.control.setAttribute('aria-invalid', 'true');
        }
        return h(
          'li',
          {},
          target
            ? h(
                'a',
                {
                  href: '#',
                  onclick: (event: Event) => {
                    event.preventDefault();
                    (target.control.matches('fieldset')
                      ? target.control.querySelector<HTMLElement>('input,select,button')
                      : target.control
                    )?.focus();
                  },
                },
                text,
              )
            : text,
        );
      });
      show(summary, problemBox(error), listed.length ? h('ul', {}, listed) : null);
      summary.focus();
    };

    element.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors();
      // A save of a live template is a release: the endpoint's workers are replaced. Say so, with what changes.
      if (editing && endpoint && current) {
        const diff = diffOf(current as unknown as Record<string, unknown>, bodyOf(form, 'update'));
        const ok =
          diff.length === 0 ||
          (await confirmDialog(
            `Save and release to ${endpoint.name}?`,
            'Save and start the release',
            h('p', {}, `Saving starts a rolling release on endpoint ${endpoint.name}: its workers are replaced one by one.`),
            diffTable(diff, 'Changes to save'),
          ));
        if (!ok) return;
      }
      save.disabled = true;
      try {
        const saved = editing ? await api.update(id, bodyOf(form, 'update'), etag) : await api.create(bodyOf(form, 'create'));
        if (!alive()) return;
        releaseGuard();
        announce(editing ? `Saved ${saved.value.name}: revision ${saved.value.revision}.` : `Created ${saved.value.name}.`);
        go(href(`/t/${encodeURIComponent(saved.value.id)}`));
      } catch (error) {
        if (!alive()) return;
        showErrors(error);
        if (error instanceof ApiError && error.status === 412) {
          summary.append(
            h(
              'p',
              {},
              'Someone changed this template since you opened it. ',
              h(
                'a',
                {
                  href: location.hash,
                  // Reloading is asked for: the guard would only ask again.
                  onclick: () => {
                    releaseGuard();
                    go(location.hash);
                  },
                },
                'Reload it',
              ),
              ' and apply your changes again.',
            ),
          );
        }
      } finally {
        save.disabled = false;
      }
    });

    show(
      container,
      h(
        'p',
        { class: 'crumbs' },
        h('a', { href: editing ? href(`/t/${encodeURIComponent(id)}`) : href('/') }, editing ? '← Template' : '← Templates'),
      ),
      h('h1', {}, title),
      endpoint
        ? h('p', { class: 'live-note' }, liveBadge(endpoint), ' Saving starts a rolling release on this endpoint.')
        : from
          ? h('p', { class: 'hint' }, 'A copy in your account, private until you make it public.')
          : null,
      element,
    );
  };
