import { ApiError, type Page } from '../api.ts';
import { h, show } from '../dom.ts';
import type { Template } from '../model.ts';

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

export function badges(t: Template): HTMLElement {
  return h(
    'span',
    { class: 'badges' },
    h('span', { class: `badge cat-${t.category.toLowerCase()}` }, t.category),
    h('span', { class: 'badge' }, t.isServerless ? 'Serverless' : 'Pod'),
    t.isPlatform ? h('span', { class: 'badge official' }, 'Official') : null,
    h('span', { class: 'badge' }, t.isPublic ? 'Public' : 'Private'),
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
