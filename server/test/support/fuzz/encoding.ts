/**
 * Byte-level encoders for hostile requests: WTF-8 (UTF-8 that keeps lone surrogates as their
 * invalid 3-byte sequence, which `Buffer.from` and `encodeURIComponent` refuse to produce),
 * percent-encoding built on it, urlencoded and multipart form bodies, and the decoding the
 * server's form parsers apply, so a case can be judged on what the server sees.
 */
export type FormEntry = readonly [string, string];

/** A lone surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** UTF-8 bytes of `text`; a lone surrogate becomes its own (invalid) 3-byte sequence. */
export function wtf8(text: string): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (const match of text.matchAll(LONE_SURROGATE)) {
    const unit = text.charCodeAt(match.index);
    parts.push(
      Buffer.from(text.slice(from, match.index), 'utf8'),
      Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]),
    );
    from = match.index + 1;
  }
  if (from === 0) return Buffer.from(text, 'utf8');
  parts.push(Buffer.from(text.slice(from), 'utf8'));
  return Buffer.concat(parts);
}

/** How each byte is written percent-encoded: itself when unreserved, else `%XX`. */
const PERCENT = Array.from({ length: 256 }, (_, byte) => {
  const char = String.fromCharCode(byte);
  return /[A-Za-z0-9\-_.~]/.test(char)
    ? char
    : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
});

/** Percent-encodes every byte of the WTF-8 form of `text` except the unreserved characters. */
export function percentEncode(text: string): string {
  const bytes = wtf8(text);
  // Unreserved characters only (the megabyte cases): the text is its own encoding.
  if (bytes.length === text.length && /^[A-Za-z0-9\-_.~]*$/.test(text)) return text;
  let out = '';
  for (const byte of bytes) out += PERCENT[byte];
  return out;
}

export function urlencoded(entries: readonly FormEntry[]): string {
  return entries.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&');
}

export const MULTIPART_BOUNDARY = 'fuzz-boundary-7MA4YWxkTrZu0gW';

export function multipart(entries: readonly FormEntry[], boundary = MULTIPART_BOUNDARY): Buffer {
  const parts = entries.map(([k, v]) =>
    Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="`),
      wtf8(k),
      Buffer.from('"\r\n\r\n'),
      wtf8(v),
      Buffer.from('\r\n'),
    ]),
  );
  return Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]);
}

export type FormValue = string | string[];

/** What an urlencoded body decodes to: repeated keys become lists. */
export function decodeUrlencoded(text: string): Record<string, FormValue> {
  const out: Record<string, FormValue> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** What a multipart body decodes to: text fields, the first of a repeated name wins. */
export function decodeMultipart(entries: readonly FormEntry[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    const key = wtf8(k).toString('utf8');
    if (!(key in out)) out[key] = wtf8(v).toString('utf8');
  }
  return out;
}
