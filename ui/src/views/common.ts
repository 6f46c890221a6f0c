import { ApiError, api, type Page } from '../api.ts';
import { h, show, uid } from '../dom.ts';
import type { Endpoint, Template } from '../model.ts';
import { href } from '../router.ts';

/** What went wrong, as the API said it, in a region screen readers announce. */
export function problemBox(error: unknown): HTMLElement {
  const problem = error instanceof ApiError ? error.problem : undefined;
  return h(
    'div',
    { class: 'problem', role: 'alert' },
    h('strong', {}, problem ? problem.title : 'Something went wrong'),
    ' ',
    problem ? problem.detail : String((error as Error)?.message ?? error),
  );
}

const IMAGE_BADGES: Record<Template['imageCheck']['status'], string> = {
  verified: 'Image verified',
  failed: 'Image check failed',
  unreachable: 'Registry unreachable',
  pending: 'Checking image…',
  off: 'Image not checked',
};

/** A gigabyte as containerDiskInGb counts it: 2^30 bytes, one decimal. */
export const gigabytes = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GB`;

/** The image check as a badge: verified, failed (its reason as the title), unreachable, pending or off; the size when known. */
export function imageBadge(check: Template['imageCheck']): HTMLElement {
  const size = check.status === 'verified' && check.sizeBytes !== null ? ` · ${gigabytes(check.sizeBytes)}` : '';
  return h(
    'span',
    { class: `badge image-check image-${check.status}`, title: check.reason ?? undefined, 'data-status': check.status },
    `${IMAGE_BADGES[check.status]}${size}`,
  );
}

export function badges(t: Template): HTMLElement {
  return h(
    'span',
    { class: 'badges' },
    imageBadge(t.imageCheck),
    h('span', { class: `badge cat-${t.category.toLowerCase()}` }, t.category),
    h('span', { class: 'badge' }, t.isServerless ? 'Serverless' : 'Pod'),
    // An official template says so alone: "Official" is who made it and who may use it.
    t.isPlatform ? h('span', { class: 'badge official' }, 'Official') : h('span', { class: 'badge' }, t.isPublic ? 'Public' : 'Private'),
  );
}

export const heading = (text: string, ...rest: (Node | string | null)[]) => h('div', { class: 'heading' }, h('h1', {}, text), ...rest);

/**
 * A button that loads the page at `next`, hands its items to `add` and then offers the page after that; when a
 * page fails to load, its problem takes the button's place.
 */
export function morePager<T>(next: string | undefined, load: (url: string) => Promise<Page<T>>, add: (items: T[]) => void, label: string) {
  const more = h('div', { class: 'pager' });
  const draw = (at: string | undefined) =>
    show(
      more,
      at
        ? h(
            'button',
            {
              type: 'button',
              onclick: async () => {
                try {
                  const page = await load(at);
                  add(page.items);
                  draw(page.next);
                } catch (error) {
                  show(more, problemBox(error));
                }
              },
            },
            label,
          )
        : null,
    );
  draw(next);
  return more;
}

/** Puts `text` on the clipboard: the Clipboard API where the page may use it, else a selected textarea and "copy". */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = h('textarea', { readonly: true, class: 'visually-hidden' });
  area.value = text;
  document.body.append(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('copy refused');
}

/** A small button that copies `text`, and says so (or that it could not) where screen readers hear it. */
export function copyButton(text: string, what: string): HTMLButtonElement {
  const said = h('span', { 'aria-live': 'polite' }, 'Copy');
  const button = h('button', { type: 'button', class: 'copy secondary', 'aria-label': `Copy ${what}`, title: `Copy ${what}` }, said);
  button.addEventListener('click', async () => {
    try {
      await copyText(text);
      said.textContent = 'Copied';
    } catch {
      said.textContent = 'Copy failed';
    }
    setTimeout(() => {
      said.textContent = 'Copy';
    }, 2000);
  });
  return button;
}

/**
 * Asks before a change that matters, in a modal dialog showing what it will do. Resolves true when confirmed;
 * Escape, the cancel button or closing it resolve false.
 */
export function confirmDialog(title: string, confirmLabel: string, ...body: (Node | string | null)[]): Promise<boolean> {
  const titleId = uid('dialog-title');
  const confirm = h('button', { type: 'submit', value: 'confirm' }, confirmLabel);
  const cancel = h('button', { type: 'submit', value: 'cancel', class: 'secondary' }, 'Cancel');
  const dialog = h(
    'dialog',
    { class: 'confirm', 'aria-labelledby': titleId },
    h('form', { method: 'dialog' }, h('h2', { id: titleId }, title), ...body, h('div', { class: 'actions' }, confirm, cancel)),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'confirm');
    });
    dialog.showModal();
    cancel.focus();
  });
}

/** The caller's endpoint that runs the template, if any (only an owner's templates can be bound, to one endpoint). */
export async function endpointRunning(templateId: string): Promise<Endpoint | undefined> {
  return (await api.allEndpoints()).find((e) => e.templateId === templateId);
}

/** "Live on endpoint X", a link to the endpoint. */
export const liveBadge = (endpoint: Pick<Endpoint, 'id' | 'name'>) =>
  h('a', { class: 'badge live', href: href(`/e/${encodeURIComponent(endpoint.id)}`) }, `Live on endpoint ${endpoint.name}`);
