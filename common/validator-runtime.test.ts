import { describe, expect, it } from 'vitest';
import { ucs2length } from './validator-runtime.ts';

describe('ucs2length', () => {
  it('counts code points: a surrogate pair is one, a lone surrogate is one', () => {
    expect(ucs2length('')).toBe(0);
    expect(ucs2length('abc')).toBe(3);
    expect(ucs2length('é中')).toBe(2);
    expect(ucs2length('a\u{1F600}b')).toBe(3);
    expect(ucs2length('\uD800')).toBe(1);
    expect(ucs2length('\uD800a\uDC00')).toBe(3);
    expect(ucs2length(`${'a'.repeat(1000)}\u{1F600}`)).toBe(1001);
  });
});
