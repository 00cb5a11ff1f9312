import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearToken } from '@/lib/token';
import { resetSessionState, updateSessionState } from '@/lib/session-state';
import type { SessionUser } from '@/generated/types';
import { dayAfter, minutesUntil } from './expiry-date-widget';
import { languageOptions } from './language-widget';
import { policyRules, quotaColor, quotaPercent } from './profile-cells';

const changeLanguage = vi.fn<(language: string) => Promise<void>>(async () => undefined);
vi.mock('@/i18n/i18n', () => ({ changeLanguage: (language: string) => changeLanguage(language) }));
vi.mock('@/generated/api', async (importOriginal) => {
  const original = await importOriginal<typeof import('@/generated/api')>();
  const operations = {
    ...original.operations,
    'profile.language': { ...original.operations['profile.language'], planned: false },
  };
  return { ...original, operations };
});

afterEach(() => {
  vi.unstubAllGlobals();
  changeLanguage.mockClear();
  resetSessionState();
  clearToken();
});

describe('quota bars', () => {
  it('fill by the share used and turn red near the limit', () => {
    expect(quotaPercent(3, 10)).toBe(30);
    expect(quotaPercent(12, 10)).toBe(100);
    expect(quotaPercent(0, 0)).toBe(0);
    expect(quotaPercent(1, 0)).toBe(100);
    expect([quotaColor(30), quotaColor(75), quotaColor(95)]).toEqual(['teal', 'yellow', 'red']);
  });
});

describe('password rules', () => {
  it('lists the rules that apply, in check order', () => {
    expect(
      policyRules({
        digits: 0,
        length: 12,
        not_username: true,
        old_passwords: 3,
        uppercase: null,
        expiration: false,
      }),
    ).toEqual([
      { rule: 'length', count: 12 },
      { rule: 'not_username', count: 1 },
      { rule: 'old_passwords', count: 3 },
    ]);
    expect(policyRules(false)).toEqual([]);
  });
});

describe('the expiry date widget', () => {
  const now = new Date(2026, 0, 10, 12, 0);

  it('turns a day into the minutes until its end, within the bounds', () => {
    expect(minutesUntil('2026-01-10', now)).toBe(12 * 60 - 1);
    expect(minutesUntil('2026-01-11', now)).toBe(36 * 60 - 1);
    expect(minutesUntil('2027-06-01', now, 1, 525600)).toBe(525600);
    expect(minutesUntil('2025-01-01', now, 1, 525600)).toBe(1);
  });

  it('shows minutes as the day they end on', () => {
    expect(dayAfter(30 * 24 * 60, now)).toBe('2026-02-09');
    expect(dayAfter(minutesUntil('2026-03-01', now), now)).toBe('2026-03-01');
  });
});

describe('the language', () => {
  it('offers every portal language by its own name', () => {
    expect(languageOptions.find((o) => o.value === 'de')?.label).toBe('Deutsch');
    expect(languageOptions).toHaveLength(12);
  });

  it('switches the interface once the action saved it', async () => {
    const { switchLanguage } = await import('./language');
    await switchLanguage({
      resource: 'profile',
      action: 'language',
      record: {},
      values: { lang: 'es' },
      answer: {},
    });
    expect(changeLanguage).toHaveBeenCalledWith('es');
  });

  it('saves the switcher choice on the server only while logged in', async () => {
    const fetchMock = vi.fn<typeof fetch>(async () => new Response('{}', { status: 200 }));
    vi.stubGlobal('fetch', fetchMock);
    const { saveLanguage } = await import('./language');
    await saveLanguage('fr');
    expect(fetchMock).not.toHaveBeenCalled();
    updateSessionState({ user: { id: 'u1', role_id: 'user' } as SessionUser });
    await saveLanguage('fr');
    expect(fetchMock).toHaveBeenCalledTimes(1);
    const [url, init] = fetchMock.mock.calls[0] ?? [];
    expect(String(url)).toBe('/api/v3/user/language/fr');
    expect(init?.method).toBe('PUT');
  });
});
