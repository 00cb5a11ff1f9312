/**
 * Allow-list HTML sanitiser for admin-written texts shown as HTML (the disclaimer).
 *
 * The input is read as a sequence of tags and text and written out again from scratch, so only
 * what the allow-list names can reach the output:
 * - tags a, h1-h4, strong, em, p, ul, ol, li, br, sub, sup, hr; any other tag is dropped and its
 *   text kept, except the elements whose content is code or foreign markup (script, style, svg,
 *   iframe...), which are dropped with their content;
 * - no attribute at all, except `href` on `a`, kept only when it is an http, https or mailto URL
 *   or a relative one (entities and control characters are decoded and stripped before the scheme
 *   is read); every kept link gets rel="noopener noreferrer";
 * - comments, doctypes and processing instructions are dropped; text is re-escaped;
 * - closing tags without an open element are dropped and open elements are closed at the end,
 *   so the output is always balanced.
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

/** Elements dropped together with everything inside them. */
const DROPPED_WITH_CONTENT = new Set([
  'script',
  'style',
  'template',
  'iframe',
  'object',
  'embed',
  'noscript',
  'noembed',
  'noframes',
  'textarea',
  'title',
  'xmp',
  'svg',
  'math',
  'select',
  'head',
  'frameset',
  'plaintext',
]);

const SAFE_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

const NAMED_ENTITIES: Record<string, string> = {
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
  lpar: '(',
  rpar: ')',
  period: '.',
};

/** Decodes character references (numeric and the common named ones). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);?/gi, (match, ref: string) => {
    if (ref[0] === '#') {
      const code =
        ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff
        ? String.fromCodePoint(code)
        : '';
    }
    return NAMED_ENTITIES[ref.toLowerCase()] ?? match;
  });
}

const escapeText = (text: string) =>
  decodeEntities(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const escapeAttribute = (value: string) =>
  value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function isControlOrSpace(ch: string): boolean {
  const code = ch.codePointAt(0) ?? 0;
  return code <= 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** The href to keep, or undefined when it is not an http(s), mailto or relative URL. */
export function safeHref(raw: string): string | undefined {
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:").
  const value = [...decodeEntities(raw)].filter((ch) => !isControlOrSpace(ch)).join('');
  if (value === '') return undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(value);
  if (scheme?.[1]) return SAFE_SCHEMES.has(`${scheme[1].toLowerCase()}:`) ? value : undefined;
  // Relative: a path, a query or a fragment (a protocol-relative "//host" is http or https too).
  return value.replace(/\\/g, '/');
}

/** A tag: `<name attributes>` or `</name>`, quoted attribute values may hold `>`. */
const TOKEN =
  /<!--[\s\S]*?(?:-->|$)|<![^>]*>?|<\?[^>]*>?|<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)((?:"[^"]*"|'[^']*'|[^'">])*)(>|$)/g;
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

function hrefOf(attributes: string): string | undefined {
  for (const m of attributes.matchAll(ATTRIBUTE))
    if (m[1]?.toLowerCase() === 'href') return safeHref(m[2] ?? m[3] ?? m[4] ?? '');
  return undefined;
}

/** The sanitised HTML (see the file comment). */
export function sanitizeHtml(input: string): string {
  let out = '';
  const open: string[] = [];
  let last = 0;
  let skipUntil: string | null = null;
  for (const m of input.matchAll(TOKEN)) {
    const start = m.index;
    const text = input.slice(last, start);
    last = start + m[0].length;
    if (skipUntil !== null) {
      if (m[1] === '/' && m[2]?.toLowerCase() === skipUntil) skipUntil = null;
      continue;
    }
    out += escapeText(text);
    const name = m[2]?.toLowerCase();
    if (!name) continue; // comment, doctype, processing instruction
    const closing = m[1] === '/';
    if (DROPPED_WITH_CONTENT.has(name)) {
      if (!closing) skipUntil = name;
      continue;
    }
    if (!ALLOWED.has(name)) continue;
    if (closing) {
      if (VOID.has(name)) continue;
      const at = open.lastIndexOf(name);
      if (at === -1) continue;
      while (open.length > at) out += `</${open.pop() ?? ''}>`;
      continue;
    }
    if (VOID.has(name)) {
      out += `<${name}>`;
      continue;
    }
    if (name === 'a') {
      const href = hrefOf(m[3] ?? '');
      out +=
        href === undefined
          ? '<a rel="noopener noreferrer">'
          : `<a href="${escapeAttribute(href)}" rel="noopener noreferrer">`;
    } else out += `<${name}>`;
    open.push(name);
  }
  if (skipUntil === null) out += escapeText(input.slice(last));
  while (open.length > 0) out += `</${open.pop() ?? ''}>`;
  return out;
}
