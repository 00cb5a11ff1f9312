/**
 * The running i18next falls back to the English text for a key a locale lacks or holds empty, and
 * never makes up a label from the key.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { i18next, initI18n } from './i18n';
import { optionalText } from './optional-text';

describe('i18next fallback', () => {
  beforeAll(async () => {
    await initI18n('de');
    // The files of a worker share one i18next: another file may have started it in English.
    await i18next.changeLanguage('de');
    await i18next.loadLanguages(['de', 'en', 'pl']);
    await i18next.loadNamespaces(['common', 'resources']);
  });

  it('shows the English text for a key the locale lacks', () => {
    i18next.addResource('en', 'resources', 'desktops.fields.fallback_probe', 'Template ID');
    expect(i18next.t('resources:desktops.fields.fallback_probe')).toBe('Template ID');
  });

  it('shows the English text for a key the locale holds empty', () => {
    i18next.addResource('en', 'resources', 'desktops.fields.empty_probe', 'Boot order');
    i18next.addResource('de', 'resources', 'desktops.fields.empty_probe', '');
    expect(i18next.t('resources:desktops.fields.empty_probe')).toBe('Boot order');
  });

  it('keeps its own text for a key the locale has', () => {
    expect(i18next.t('resources:templates.title')).toBe('Vorlagen');
    expect(i18next.t('resources:templates.title', { lng: 'en' })).toBe('Templates');
  });

  it('answers the bare key, not a label derived from it, for a key English lacks too', () => {
    expect(i18next.t('resources:desktops.fields.template_probe_id')).toBe(
      'desktops.fields.template_probe_id',
    );
  });

  it('leaves an optional text out when no catalogue has it, never showing its key', () => {
    const t = (key: string | string[], options?: Record<string, unknown>) =>
      i18next.t(key, options);
    expect(optionalText(t, 'resources:session.help.username_probe')).toBe('');
    i18next.addResource('en', 'resources', 'session.help.name_probe', 'Your full name');
    expect(optionalText(t, 'resources:session.help.name_probe')).toBe('Your full name');
    expect(optionalText(t, 'resources:templates.title')).toBe('Vorlagen');
  });

  it('picks the plural form the count needs', () => {
    const en = i18next.getFixedT('en');
    expect(en('common:profile.policy.length', { count: 1 })).toBe('At least 1 character');
    expect(en('common:profile.policy.length', { count: 8 })).toBe('At least 8 characters');
    expect(en('common:bookings.limits.items', { count: 1 })).toBe('at most 1 upcoming booking');
    expect(en('common:bookings.limits.items', { count: 3 })).toBe('at most 3 upcoming bookings');
    expect(i18next.t('common:json.fields', { count: 1 })).toBe('1 Feld');
    expect(i18next.t('common:json.fields', { count: 4 })).toBe('4 Felder');
    expect(i18next.t('common:planning.planTitle', { name: 'GPU', count: 1 })).toBe(
      'GPU (1 Einheit)',
    );
    expect(i18next.t('common:planning.planTitle', { name: 'GPU', count: 4 })).toBe(
      'GPU (4 Einheiten)',
    );
  });

  it('picks the few and many forms in Polish', () => {
    const pl = i18next.getFixedT('pl');
    expect(pl('common:allowed.searchHint', { count: 1 })).toBe(
      'Aby wyszukać, wpisz co najmniej 1 znak.',
    );
    expect(pl('common:allowed.searchHint', { count: 3 })).toBe(
      'Aby wyszukać, wpisz co najmniej 3 znaki.',
    );
    expect(pl('common:allowed.searchHint', { count: 5 })).toBe(
      'Aby wyszukać, wpisz co najmniej 5 znaków.',
    );
  });
});
