/**
 * Byte-level encoders for hostile requests: WTF-8 (UTF-8 that keeps lone surrogates as their
 * invalid 3-byte sequence, which `Buffer.from` and `encodeURIComponent` refuse to produce),
 * percent-encoding built on it, urlencoded and multipart form bodies, and the decoding the
 * server's form parsers apply, so a case can be judged on what the server sees.
 */
export type FormEntry = readonly [string, string];

/** UTF-8 bytes of `text`; a lone surrogate becomes its own (invalid) 3-byte sequence. */
export function wtf8(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      bytes.push(...Buffer.from(text.slice(i, i + 2), 'utf8'));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      bytes.push(0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f));
    } else {
      bytes.push(...Buffer.from(text[i] ?? '', 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/** Percent-encodes every byte of the WTF-8 form of `text` except the unreserved characters. */
export function percentEncode(text: string): string {
  let out = '';
  for (const byte of wtf8(text)) {
    const char = String.fromCharCode(byte);
    out +=
      byte < 0x80 && UNRESERVED.test(char)
        ? char
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
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
