import { describe, expect, it } from 'vitest';
import { formatNumber } from './numbers';

describe('numbers', () => {
  it('groups digits and writes decimals as the interface language does', () => {
    expect(formatNumber(1234.5, 'en')).toBe('1,234.5');
    expect(formatNumber(1234.5, 'de')).toBe('1.234,5');
    expect(formatNumber(1234.5, 'zh_Hans')).toBe('1,234.5');
  });
});
