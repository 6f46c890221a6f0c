import { api } from '../api.ts';
import { h, show, when } from '../dom.ts';
import type { Template } from '../model.ts';
import { copyButton, gigabytes, imageBadge, problemBox } from './common.ts';

// A template's image as its registry showed it: the check's badge, size, platforms, CUDA version, the pinned digest with
// a copy button, the reason when it failed, and "Check again" for those who may ask.

/** The image card of the template page; `canCheck` offers "Check again" (the owner), which redraws it with the answer. */
export function imageCheckCard(t: Template, canCheck: boolean): HTMLElement {
  const card = h('section', { class: 'card image-card', 'aria-labelledby': 'image-h' });
  const draw = (template: Template, failure?: unknown) => {
    const check = template.imageCheck;
    const row = (term: string, ...value: (Node | string)[]) => [h('dt', {}, term), h('dd', {}, ...value)];
    const button = h('button', { type: 'button', class: 'secondary', onclick: () => again(button) }, 'Check again');
    show(
      card,
      h(
        'div',
        { class: 'heading' },
        h('h2', { id: 'image-h' }, 'Image'),
        imageBadge(check),
        canCheck && check.status !== 'off' ? button : null,
      ),
      check.reason ? h('p', { class: check.status === 'failed' ? 'problem' : 'hint', role: 'status' }, check.reason) : null,
      failure ? problemBox(failure) : null,
      h(
        'dl',
        // Not `.fields`: that is the template's own list, which the page has once.
        { class: 'image-fields' },
        row('Status', check.status),
        row(
          'Size',
          check.sizeBytes === null ? h('span', { class: 'muted' }, 'unknown') : `${gigabytes(check.sizeBytes)} compressed (linux/amd64)`,
        ),
        row('Platforms', check.platforms.length ? check.platforms.join(', ') : h('span', { class: 'muted' }, 'unknown')),
        row('CUDA', check.cudaVersion ?? h('span', { class: 'muted' }, 'none declared')),
        row(
          'Digest',
          ...(check.digest
            ? [h('code', { class: 'digest' }, check.digest), ' ', copyButton(check.digest, 'image digest')]
            : [h('span', { class: 'muted' }, 'none yet')]),
        ),
        row('Checked', check.checkedAt ? when(check.checkedAt) : h('span', { class: 'muted' }, 'not yet')),
      ),
    );
  };
  const again = async (button: HTMLButtonElement) => {
    button.disabled = true;
    button.textContent = 'Checking…';
    try {
      draw((await api.checkImage(t.id)).value);
    } catch (error) {
      draw(t, error);
    }
  };
  draw(t);
  return card;
}
