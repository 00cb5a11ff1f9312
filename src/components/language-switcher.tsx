import { NativeSelect } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { changeLanguage } from '@/i18n/i18n';
import { LANGUAGES, LANGUAGE_NAMES, matchLanguage, type Language } from '@/i18n/languages';

export interface LanguageSwitcherProps {
  /** Called with the chosen language once the interface switched (the app saves it on the server). */
  onChoose?: (language: Language) => void;
}

/** Language switcher (native select keeps the login route small); the choice survives reload. */
export function LanguageSwitcher({ onChoose }: LanguageSwitcherProps) {
  const { t, i18n } = useTranslation();
  return (
    <NativeSelect
      aria-label={t('common:language')}
      size="xs"
      value={matchLanguage(i18n.language) ?? 'en'}
      data-testid="language-switcher"
      onChange={(event) => {
        const next = matchLanguage(event.currentTarget.value);
        if (next) void changeLanguage(next).then(() => onChoose?.(next));
      }}
      data={LANGUAGES.map((code) => ({ value: code, label: LANGUAGE_NAMES[code] }))}
    />
  );
}
