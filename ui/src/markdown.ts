import DOMPurify from 'dompurify';
import { marked } from 'marked';

// A readme is Markdown written by whoever made the template: rendered with marked, then sanitized with DOMPurify
// before it touches the page. Scripts, event handlers, styles, forms and frames are dropped; links keep only safe
// schemes and never get the opener. The page's Content-Security-Policy is the second wall.

const SAFE_IMAGE = /^(?:https:|data:image\/(?:png|gif|jpeg|webp);)/i;

/**
 * Where a readme link may go, as the browser will read it: an http(s) or mailto URL it names outright, a fragment,
 * or a path on this origin. The rest (javascript: and other schemes, and relative-looking links that leave the
 * origin: "//evil.example", and "/\evil.example" or "\\evil.example", which browsers read the same) go nowhere.
 * A link kept is written out resolved, so that it goes exactly where it was checked to go.
 */
function safeHref(href: string): { href: string; newTab: boolean } | undefined {
  if (href.startsWith('#')) return { href, newTab: false };
  let url: URL;
  try {
    url = new URL(href, window.location.href);
  } catch {
    return undefined;
  }
  if (url.origin === window.location.origin) return { href: url.href, newTab: false };
  const named = /^(?:https?|mailto):/i.test(href) && ['http:', 'https:', 'mailto:'].includes(url.protocol);
  return named ? { href: url.href, newTab: url.protocol !== 'mailto:' } : undefined;
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href');
    const safe = href === null ? undefined : safeHref(href.trim());
    if (safe) node.setAttribute('href', safe.href);
    else node.removeAttribute('href');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
    if (safe?.newTab) node.setAttribute('target', '_blank');
  }
  if (node.tagName === 'IMG') {
    const src = node.getAttribute('src')?.trim() ?? '';
    if (!SAFE_IMAGE.test(src)) node.removeAttribute('src');
    node.setAttribute('loading', 'lazy');
    node.setAttribute('referrerpolicy', 'no-referrer');
  }
});

const CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style', 'id', 'name', 'srcset'],
};

/** Heading ids are ours, never the author's: prefixed, so no heading can shadow a name the page uses (DOM clobbering). */
export const HEADING_ID_PREFIX = 'user-content-';

/** The slug GitHub gives a heading: lower case, punctuation dropped, spaces as dashes. */
export function slugOf(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Gives each heading an id from its text (`user-content-usage`, then `user-content-usage-1` …), as GitHub does, prefixed. */
function anchorHeadings(fragment: DocumentFragment): void {
  const seen = new Map<string, number>();
  for (const heading of fragment.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    const slug = slugOf(heading.textContent ?? '');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    heading.id = `${HEADING_ID_PREFIX}${count ? `${slug}-${count}` : slug}`;
  }
}

/**
 * Makes the readme's links to its own headings (`#usage`) scroll to them: in this single-page app a fragment is a
 * route, so following one would leave the template.
 */
export function scrollToHeadings(readme: HTMLElement): void {
  readme.addEventListener('click', (event) => {
    const link = (event.target as Element).closest?.('a');
    const target = link?.getAttribute('href');
    if (!target?.startsWith('#') || target.startsWith('#/')) return;
    event.preventDefault();
    let slug: string;
    try {
      slug = decodeURIComponent(target.slice(1));
    } catch {
      return;
    }
    const heading = readme.querySelector<HTMLElement>(`[id="${CSS.escape(HEADING_ID_PREFIX + slug.toLowerCase())}"]`);
    if (!heading) return;
    heading.tabIndex = -1;
    heading.scrollIntoView({ block: 'start' });
    heading.focus({ preventScroll: true });
  });
}

/**
 * The readme as a sanitized fragment, ready to append, its headings with ids. (Chromium reports the hostile attributes it meets while
 * DOMPurify parses as Content-Security-Policy violations: they are parsed, never run, and then removed.)
 */
export function renderMarkdown(markdown: string): DocumentFragment {
  const html = marked.parse(markdown, { async: false, gfm: true });
  const fragment = DOMPurify.sanitize(html, { ...CONFIG, RETURN_DOM_FRAGMENT: true });
  anchorHeadings(fragment);
  return fragment;
}
