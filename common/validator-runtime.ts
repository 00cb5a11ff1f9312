/**
 * Runtime helpers the precompiled validators (src/generated/validators.js) call. Kept here so the
 * generated ESM file imports plain ESM instead of ajv's CommonJS runtime modules.
 */
import { fullFormats } from 'ajv-formats/dist/formats.js';

/** A high surrogate: only a string holding one has fewer code points than UTF-16 units. */
const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** Length of a string in Unicode code points (what JSON Schema's minLength/maxLength count). */
export function ucs2length(str: string): number {
  if (!HIGH_SURROGATE.test(str)) return str.length;
  let length = 0;
  let pos = 0;
  while (pos < str.length) {
    length++;
    const value = str.charCodeAt(pos++);
    if (value >= 0xd800 && value <= 0xdbff && pos < str.length) {
      const next = str.charCodeAt(pos);
      if ((next & 0xfc00) === 0xdc00) pos++;
    }
  }
  return length;
}

export const formats = fullFormats;

/** Deep equality of JSON values (what const, enum of objects and uniqueItems compare with). */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    if (Array.isArray(a) && Array.isArray(b))
      return a.length === b.length && a.every((v, i) => equal(v, b[i]));
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every(
        (k) =>
          Object.prototype.hasOwnProperty.call(b, k) &&
          equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return a !== a && b !== b;
}
