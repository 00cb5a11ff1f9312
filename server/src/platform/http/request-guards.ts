/**
 * Checks every request passes before any handler or database sees it: JSON nested deeper than
 * MAX_JSON_DEPTH, and strings (values or object keys, in the path, the query or the body) holding
 * a NUL character or a lone UTF-16 surrogate. PostgreSQL cannot store either, and neither belongs
 * in a name, an id or a description; deep nesting costs stack in every later walk of the value.
 */
import secureJson from 'secure-json-parse';
import { ApiError } from './api-error.ts';

/** Deepest array/object nesting a JSON body may have. */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether the JSON text nests arrays/objects deeper than `max`. Scans the text once, before
 * parsing, so a body nested 100,000 deep costs a linear scan and never a deep recursion.
 */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A NUL, or a high surrogate not followed by a low one, or a low surrogate not after a high one. */
const BAD_CHARACTER = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function hasBadCharacter(text: string): boolean {
  return BAD_CHARACTER.test(text);
}

/**
 * A key as one step of a reported path, safe to send and to log whatever it holds: `~` and `/`
 * escaped as in a JSON pointer, and every NUL, lone surrogate or other control character written
 * as `\uXXXX`. Never throws (a URI encoder throws on a lone surrogate).
 */
export function pathStep(key: string): string {
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    const high = c >= 0xd800 && c <= 0xdbff;
    const low = c >= 0xdc00 && c <= 0xdfff;
    const next = key.charCodeAt(i + 1);
    if (high && next >= 0xdc00 && next <= 0xdfff) {
      out += key.slice(i, i + 2);
      i++;
    } else if (c < 0x20 || c === 0x7f || high || low)
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    else if (c === 0x7e) out += '~0';
    else if (c === 0x2f) out += '~1';
    else out += key[i];
  }
  return out;
}

/**
 * The JSON-pointer-like path of the first string (value or key) in `value` with a NUL or a lone
 * surrogate, or null. Binary parts (uploaded file buffers) are not text and are skipped.
 */
export function badStringPath(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return hasBadCharacter(value) ? path || '/' : null;
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = badStringPath(value[i], `${path}/${i}`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (hasBadCharacter(key)) return `${path}/${pathStep(key)}`;
    const found = badStringPath(inner, `${path}/${pathStep(key)}`);
    if (found !== null) return found;
  }
  return null;
}

/** 400 for a request part holding a NUL or a lone surrogate at `path`. */
export function badCharacterError(part: string, path: string): ApiError {
  return new ApiError(
    'bad_request',
    `${part}${path === '/' ? '' : path} contains a NUL character or an invalid UTF-16 sequence`,
    'invalid_characters',
    { part, path },
  );
}

/**
 * Parses a JSON body: 400 when it is empty, malformed, nested deeper than MAX_JSON_DEPTH, or
 * carries `__proto__`/`constructor.prototype` keys (prototype poisoning). Strings are checked
 * later with the rest of the request.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '')
    throw new ApiError('bad_request', 'The JSON body is empty', 'bad_request');
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
    throw new ApiError(
      'bad_request',
      `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels`,
      'body_too_deep',
      { max: MAX_JSON_DEPTH },
    );
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    throw new ApiError('bad_request', 'Malformed JSON body', 'bad_request');
  }
}

/**
 * The router ignores a trailing slash, so `/things/` reaches the list route although it is the
 * show call of a record with an empty id: that names nothing and answers 404, never the list.
 */
export function refuseEmptyId(request: { url: string }): void {
  if (request.url.split('?')[0]?.endsWith('/'))
    throw new ApiError('not_found', 'Not found', 'not_found', { id: '' });
}
