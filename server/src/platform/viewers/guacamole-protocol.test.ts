import { describe, expect, it } from 'vitest';
import { codePoints, encode, InstructionReader, parseInstructions } from './guacamole-protocol.ts';

describe('Guacamole instruction framing', () => {
  it('counts element lengths in code points', () => {
    expect(encode('size', 0, 640, 480)).toBe('4.size,1.0,3.640,3.480;');
    expect(codePoints('a😀b')).toBe(3);
    expect(encode('clipboard', 'é😀')).toBe('9.clipboard,2.é😀;');
    expect(parseInstructions('9.clipboard,2.é😀;').instructions[0]?.args).toEqual(['é😀']);
  });

  it('keeps the separators inside values and waits for whole instructions across chunks', () => {
    const text = encode('connect', 'a,b;c', '3.x') + encode('sync', 42);
    const bytes = Buffer.from(text + encode('nop'), 'utf8');
    const reader = new InstructionReader();
    const seen = [];
    // One byte at a time: UTF-8 sequences and instructions are cut everywhere.
    for (let i = 0; i < bytes.length; i++) seen.push(...reader.push(bytes.subarray(i, i + 1)));
    expect(seen.map((i) => [i.opcode, ...i.args])).toEqual([
      ['connect', 'a,b;c', '3.x'],
      ['sync', '42'],
      ['nop'],
    ]);
    expect(seen.map((i) => i.raw).join('')).toBe(text + encode('nop'));
  });

  it('refuses a malformed stream', () => {
    expect(() => parseInstructions('4.size,x.0;')).toThrow();
    expect(() => parseInstructions('4.sizeX1.0;')).toThrow();
    expect(() => new InstructionReader(8).push('4.size,100.aaaaaaaaaaaa')).toThrow();
  });
});
