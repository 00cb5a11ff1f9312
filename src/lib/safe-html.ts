/**
 * HTML from the server's notification and disclaimer templates, kept to the small set of tags the
 * server's own sanitiser allows (a, h1-h4, strong, em, p, ul, ol, li, br, sub, sup, hr). The
 * server already cleans it; this second pass in the browser means a template that slipped
 * through still cannot run script: other elements are unwrapped to their text (script-like ones
 * dropped with their content), every attribute but a web or mail link's href is removed, and
 * links open in a new tab without an opener.
 */
const ALLOWED = new Set([
  'A',
  'H1',
  'H2',
  'H3',
  'H4',
  'STRONG',
  'EM',
  'B',
  'I',
  'P',
  'UL',
  'OL',
  'LI',
  'BR',
  'SUB',
  'SUP',
  'HR',
]);
const DROPPED = new Set([
  'SCRIPT',
  'STYLE',
  'IFRAME',
  'OBJECT',
  'EMBED',
  'TEMPLATE',
  'NOSCRIPT',
  'SVG',
  'MATH',
  'FORM',
  'INPUT',
  'BUTTON',
  'TEXTAREA',
  'SELECT',
]);
const SAFE_HREF = /^(https?:|mailto:)/i;

function clean(node: Node): void {
  for (const child of [...node.childNodes]) {
    if (child.nodeType === Node.COMMENT_NODE) {
      child.remove();
      continue;
    }
    if (child.nodeType !== Node.ELEMENT_NODE) continue;
    const element = child as Element;
    if (DROPPED.has(element.tagName)) {
      element.remove();
      continue;
    }
    clean(element);
    if (!ALLOWED.has(element.tagName)) {
      element.replaceWith(...element.childNodes);
      continue;
    }
    const href = element.tagName === 'A' ? element.getAttribute('href')?.trim() : undefined;
    for (const name of element.getAttributeNames()) element.removeAttribute(name);
    if (href && SAFE_HREF.test(href)) {
      element.setAttribute('href', href);
      element.setAttribute('target', '_blank');
      element.setAttribute('rel', 'noopener noreferrer');
    }
  }
}

/** The HTML with only the allowed tags and safe links left. */
export function sanitizeHtml(html: string | null | undefined): string {
  if (!html) return '';
  const doc = new DOMParser().parseFromString(`<body>${html}</body>`, 'text/html');
  clean(doc.body);
  return doc.body.innerHTML;
}
