/**
 * The `language` input widget: one of the portal's languages (the generated `languages`
 * constant), each shown by its own name.
 */
import { constants } from '@/generated/constants';
import { LANGUAGE_NAMES, matchLanguage } from '@/i18n/languages';
import { SelectWidget } from '@/resources/form/select-widget';
import type { WidgetProps } from '@/resources/form/types';

export const languageOptions = constants.profile.languages.value.map((code) => {
  const language = matchLanguage(code);
  return { value: code, label: language ? LANGUAGE_NAMES[language] : code };
});

export function LanguageWidget(props: WidgetProps) {
  return <SelectWidget {...props} options={languageOptions} />;
}
