/**
 * The HTML a notification or message template may carry to the browser: the tags a, h1–h4,
 * strong, em, p, ul, ol, li, br, sub, sup and hr, and on links only an http(s), mailto or
 * same-site href and a title. Every other tag is dropped with its attributes (its text stays,
 * escaped), and the content of script, style and the like is dropped whole. Comments and
 * declarations go. The output is well formed: every kept element is closed.
 */

const ALLOWED = new Set([
  'a',
  'h1',
  'h2',
  'h3',
  'h4',
  'strong',
  'em',
  'p',
  'ul',
  'ol',
  'li',
  'br',
  'sub',
  'sup',
  'hr',
]);
const VOID = new Set(['br', 'hr']);
/** Elements whose content is never text to show. */
const DROP_WITH_CONTENT = new Set([
  'script',
  'style',
  'template',
  'iframe',
  'object',
  'embed',
  'noscript',
  'textarea',
  'title',
  'svg',
  'math',
  'xmp',
  'noembed',
  'noframes',
  'plaintext',
]);

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  colon: ':',
  tab: '\t',
  newline: '\n',
  sol: '/',
  period: '.',
  lpar: '(',
  rpar: ')',
};

/** Decodes numeric and the usual named character references; null when an unknown one is left. */
function decodeEntities(value: string): string | null {
  let unknown = false;
  const out = value.replace(/&(#x[0-9a-f]+|#\d+|[a-z][a-z0-9]*);?/gi, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code =
        ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff
        ? String.fromCodePoint(code)
        : '';
    }
    const named = NAMED[ref.toLowerCase()];
    if (named === undefined) {
      unknown = true;
      return whole;
    }
    return named;
  });
  return unknown ? null : out;
}

const escapeText = (s: string) =>
  s
    .replace(/&(?!(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);)/gi, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');

const escapeAttribute = (s: string) =>
  s
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');

/** A link target that can only navigate: http(s), mailto, or a path or fragment of this site. */
function safeHref(raw: string): string | null {
  const decoded = decodeEntities(raw);
  if (decoded === null) return null;
  // Browsers ignore control characters and whitespace inside a scheme: so does this check.
  const compact = [...decoded]
    .filter((c) => {
      const code = c.codePointAt(0) ?? 0;
      return code > 0x20 && code !== 0x7f;
    })
    .join('');
  if (/^(?:https?:\/\/|mailto:)/i.test(compact)) return decoded.trim();
  if (/^(?:\/(?![/\\])|#)/.test(compact)) return decoded.trim();
  return null;
}

const ATTRIBUTE_RE = /([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

function attributesOf(source: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of source.matchAll(ATTRIBUTE_RE)) {
    const name = (m[1] ?? '').toLowerCase();
    if (!out.has(name)) out.set(name, m[2] ?? m[3] ?? m[4] ?? '');
  }
  return out;
}

function openTag(name: string, attributeSource: string): string {
  if (name !== 'a') return `<${name}>`;
  const attributes = attributesOf(attributeSource);
  let out = '<a';
  const href = attributes.get('href');
  const safe = href === undefined ? null : safeHref(href);
  if (safe !== null) out += ` href="${escapeAttribute(safe)}" rel="noopener noreferrer"`;
  const title = attributes.get('title');
  if (title !== undefined) {
    const decoded = decodeEntities(title);
    if (decoded !== null) out += ` title="${escapeAttribute(decoded)}"`;
  }
  return `${out}>`;
}

const TOKEN_RE =
  /<!--[\s\S]*?(?:-->|$)|<![^>]*>?|<\?[^>]*>?|<\/([A-Za-z][A-Za-z0-9]*)[^>]*>?|<([A-Za-z][A-Za-z0-9]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;

/** The allow-listed form of a notification's HTML (an empty string for null or undefined). */
export function sanitizeNotificationHtml(html: string | null | undefined): string {
  if (!html) return '';
  const open: string[] = [];
  let out = '';
  let dropping: string | null = null;
  let last = 0;
  for (const m of html.matchAll(TOKEN_RE)) {
    const index = m.index;
    if (dropping === null) out += escapeText(html.slice(last, index));
    last = index + m[0].length;
    const closing = m[1]?.toLowerCase();
    const opening = m[2]?.toLowerCase();
    if (dropping !== null) {
      if (closing === dropping) dropping = null;
      continue;
    }
    if (opening !== undefined) {
      if (DROP_WITH_CONTENT.has(opening)) {
        if (!/\/\s*$/.test(m[3] ?? '')) dropping = opening;
        continue;
      }
      if (!ALLOWED.has(opening)) continue;
      out += openTag(opening, m[3] ?? '');
      if (!VOID.has(opening)) open.push(opening);
      continue;
    }
    if (closing !== undefined && ALLOWED.has(closing) && !VOID.has(closing)) {
      const at = open.lastIndexOf(closing);
      if (at === -1) continue;
      // Closing an outer element closes the ones still open inside it.
      while (open.length > at) out += `</${open.pop() ?? ''}>`;
    }
  }
  if (dropping === null) out += escapeText(html.slice(last));
  while (open.length > 0) out += `</${open.pop() ?? ''}>`;
  return out;
}
