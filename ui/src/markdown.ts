import DOMPurify from 'dompurify';
import { marked } from 'marked';

// A readme is Markdown written by whoever made the template: rendered with marked, then sanitized with DOMPurify
// before it touches the page. Scripts, event handlers, styles, forms and frames are dropped; links keep only safe
// schemes and never get the opener. The page's Content-Security-Policy is the second wall.

const SAFE_LINK = /^(?:https?:|mailto:|#|\/(?!\/))/i;
const SAFE_IMAGE = /^(?:https:|data:image\/(?:png|gif|jpeg|webp);)/i;

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href')?.trim() ?? '';
    if (!SAFE_LINK.test(href)) node.removeAttribute('href');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
    if (/^https?:/i.test(href)) node.setAttribute('target', '_blank');
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

/**
 * The readme as a sanitized fragment, ready to append. (Chromium reports the hostile attributes it meets while
 * DOMPurify parses as Content-Security-Policy violations: they are parsed, never run, and then removed.)
 */
export function renderMarkdown(markdown: string): DocumentFragment {
  const html = marked.parse(markdown, { async: false, gfm: true });
  return DOMPurify.sanitize(html, { ...CONFIG, RETURN_DOM_FRAGMENT: true });
}
