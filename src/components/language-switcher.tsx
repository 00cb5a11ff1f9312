import { NativeSelect } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { changeLanguage } from '@/i18n/i18n';
import { LANGUAGES, LANGUAGE_NAMES, matchLanguage } from '@/i18n/languages';

/** Language switcher (native select keeps the login route small); the choice survives reload. */
export function LanguageSwitcher() {
  const { t, i18n } = useTranslation();
  return (
    <NativeSelect
      aria-label={t('common:language')}
      size="xs"
      value={matchLanguage(i18n.language) ?? 'en'}
      data-testid="language-switcher"
      onChange={(event) => {
        const next = matchLanguage(event.currentTarget.value);
        if (next) void changeLanguage(next);
      }}
      data={LANGUAGES.map((code) => ({ value: code, label: LANGUAGE_NAMES[code] }))}
    />
  );
}
