import './styles.css';
import { session, whenUnauthenticated } from './api.ts';
import { h, show } from './dom.ts';
import { mayLeave, releaseGuard } from './guard.ts';
import { currentRoute, go, href } from './router.ts';
import { endpointFormView } from './views/endpoint-form.ts';
import { endpointsView, endpointView } from './views/endpoints.ts';
import { formView } from './views/form.ts';
import { historyView } from './views/history.ts';
import { listView } from './views/list.ts';
import { registryAuthsView } from './views/registry-auths.ts';
import { secretsView } from './views/secrets.ts';
import { signInView } from './views/signin.ts';
import { detailView } from './views/template.ts';
import type { View } from './views/view.ts';

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const status = document.getElementById('status') as HTMLElement;

/** Whether the status message is new: a message outlives the navigation it announces, and is cleared by the next. */
let fresh = false;
/** A message for screen readers and eyes. */
function announce(message: string): void {
  status.textContent = message;
  fresh = true;
}

let rendering = 0;
let afterSignIn = '#/';

function renderNav(signedIn: boolean, section: string | undefined): void {
  if (!signedIn) {
    show(nav);
    return;
  }
  const current = (...sections: (string | undefined)[]) => (sections.includes(section) ? 'page' : undefined);
  show(
    nav,
    h('a', { href: href('/'), 'aria-current': current(undefined, 't') }, 'Templates'),
    h('a', { href: href('/endpoints'), 'aria-current': current('endpoints', 'e') }, 'Endpoints'),
    h('a', { href: href('/registry'), 'aria-current': current('registry') }, 'Registry credentials'),
    h('a', { href: href('/secrets'), 'aria-current': current('secrets') }, 'Secrets'),
    h(
      'button',
      {
        type: 'button',
        class: 'link',
        onclick: () => {
          session.clear();
          announce('Signed out.');
          go('#/');
        },
      },
      'Sign out',
    ),
  );
}

function pick(path: string[]): View {
  const [first, id, sub] = path;
  if (first === 'new') return formView(undefined);
  if (first === 't' && id) {
    if (sub === 'edit') return formView(id);
    if (sub === 'history') return historyView(id);
    return detailView(id);
  }
  if (first === 'endpoints') return id === 'new' ? endpointFormView(undefined) : endpointsView;
  if (first === 'e' && id) return sub === 'edit' ? endpointFormView(id) : endpointView(id);
  if (first === 'registry') return registryAuthsView;
  if (first === 'secrets') return secretsView;
  return listView;
}

/** The URL of the screen shown, to go back to when the user stays on a screen with unsaved changes. */
let shown = location.href;

async function render(): Promise<void> {
  const token = ++rendering;
  releaseGuard();
  shown = location.href;
  if (!fresh) status.textContent = '';
  fresh = false;
  const route = currentRoute();
  const signedIn = session.get() !== null;
  renderNav(signedIn, route.path[0]);
  const view: View = signedIn ? pick(route.path) : signInView(() => go(afterSignIn));
  if (!signedIn && location.hash && location.hash !== '#/') afterSignIn = location.hash;
  const container = h('div', { class: 'view' }, h('p', { class: 'muted' }, 'Loading…'));
  show(main, container);
  await view({
    route,
    container,
    alive: () => token === rendering,
    announce,
  });
  if (token !== rendering) return;
  // Focus moves to the new screen's heading, so keyboard and screen-reader users start at its top.
  const heading = container.querySelector<HTMLElement>('h1');
  if (heading && !container.contains(document.activeElement)) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: false });
  }
  document.title = heading?.textContent ? `${heading.textContent} · Podplate` : 'Podplate';
}

whenUnauthenticated((problem) => {
  session.clear();
  announce(`Signed out: ${problem.detail}`);
  afterSignIn = location.hash || '#/';
  void render();
});

document.querySelector('.skip')?.addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});
window.addEventListener('hashchange', () => {
  // The hash has already changed: staying puts the screen's URL back without a new history entry or a redraw.
  if (!mayLeave()) {
    history.replaceState(history.state, '', shown);
    return;
  }
  void render();
});
void render();
