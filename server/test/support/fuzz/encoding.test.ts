import { describe, expect, it } from 'vitest';
import { percentEncode, wtf8 } from './encoding.ts';

describe('fuzz encoders', () => {
  it('write a lone surrogate as its own 3-byte sequence and a pair as 4 UTF-8 bytes', () => {
    expect([...wtf8('a\uD800b')]).toEqual([0x61, 0xed, 0xa0, 0x80, 0x62]);
    expect([...wtf8('\uDFFF')]).toEqual([0xed, 0xbf, 0xbf]);
    expect(wtf8('\u{1F600}')).toEqual(Buffer.from('\u{1F600}', 'utf8'));
    expect([...wtf8('\uD800\uD83D\uDE00')]).toEqual([0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98, 0x80]);
  });

  it('percent-encode every byte but the unreserved characters', () => {
    expect(percentEncode('aZ09-_.~')).toBe('aZ09-_.~');
    expect(percentEncode("a b/!'é\0")).toBe('a%20b%2F%21%27%C3%A9%00');
    expect(percentEncode('\uDC00')).toBe('%ED%B0%80');
  });
});
