import { describe, expect, it } from 'vitest';
import dayjs from 'dayjs';
import { loadDayjsLocale } from './date-picker-locale';

describe('date picker locale', () => {
  it('loads the dayjs locale of the interface language, so pickers name months in it', async () => {
    const november = dayjs(new Date(2026, 10, 28));
    expect(await loadDayjsLocale('de')).toBe('de');
    expect(november.locale('de').format('dddd')).toBe('Samstag');
    expect(await loadDayjsLocale('es')).toBe('es');
    expect(november.locale('es').format('MMMM YYYY')).toBe('noviembre 2026');
    expect(await loadDayjsLocale('zh_Hans')).toBe('zh-cn');
    expect(november.locale('zh-cn').format('dd')).toBe('六');
    expect(await loadDayjsLocale('en')).toBe('en');
  });
});
