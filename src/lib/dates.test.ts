import { describe, expect, it } from 'vitest';
import { formatDate, formatRelative } from './dates';
import { formatGigabytes } from './sizes';

describe('dates', () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0);

  it('formats epoch seconds and wire dates as YYYY-MM-DD HH:mm and nothing for missing values', () => {
    expect(formatDate(0)).toMatch(/^19(69|70)-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(formatDate('2026-11-23T10:00+0000')).toMatch(/^2026-11-23 \d{2}:00$/);
    expect(formatDate(null)).toBe('');
    expect(formatDate(false)).toBe('');
  });

  it('says how long ago in the interface language, in the largest fitting unit', () => {
    expect(formatRelative(now / 1000 - 5 * 60, 'en', now)).toBe('5 minutes ago');
    expect(formatRelative(now / 1000 - 2 * 3600, 'en', now)).toBe('2 hours ago');
    expect(formatRelative(now / 1000 - 24 * 3600, 'en', now)).toBe('yesterday');
    expect(formatRelative(now / 1000 - 5 * 60, 'es', now)).toBe('hace 5 minutos');
    expect(formatRelative(undefined, 'en', now)).toBe('');
  });

  it('shows sizes in GB with one decimal, localised', () => {
    expect(formatGigabytes(1.5 * 1024 ** 3, 'en')).toBe('1.5 GB');
    expect(formatGigabytes(1.5 * 1024 ** 3, 'es')).toBe('1,5 GB');
    expect(formatGigabytes(null, 'en')).toBe('');
  });
});
