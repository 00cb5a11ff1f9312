import { describe, expect, it } from 'vitest';
import { asciiOnly } from './build-server.mjs';

describe('the server bundle', () => {
  it('keeps only ASCII, one `?` per UTF-16 unit, so that the source map columns hold', () => {
    const text = '/** start → stop (≤ 10 s) 🚀 */\nconst a = "\\u2192";';
    const ascii = asciiOnly(text);
    expect(ascii).toBe('/** start ? stop (? 10 s) ?? */\nconst a = "\\u2192";');
    expect(ascii).toHaveLength(text.length);
    expect(ascii.indexOf('const')).toBe(text.indexOf('const'));
    expect([...ascii].every((char) => char.charCodeAt(0) < 0x80)).toBe(true);
  });
});
