/** The translator the cells of a screen share, and the translated text of enum values. */
import { createContext, useContext, useMemo, type ReactNode } from 'react';
import i18next, { type TFunction } from 'i18next';
import { I18nContext, useTranslation } from 'react-i18next';

/**
 * The translator the cells of one screen share: a list provides it once (thousands of cells do not
 * each subscribe to i18next); outside a provider the cells read i18next directly.
 */
export interface CellText {
  t: TFunction;
  language: string;
}

const CellTextContext = createContext<CellText | null>(null);

/** Provides the screen's translator to its cells (re-rendering them when the language changes). */
export function CellTextProvider({ children }: { children: ReactNode }) {
  const { t, i18n } = useTranslation();
  const value = useMemo(() => ({ t, language: i18n.language }), [t, i18n.language]);
  return <CellTextContext.Provider value={value}>{children}</CellTextContext.Provider>;
}

/** The translator of the screen's cells (a list's, else i18next's). */
export function useCellText(): CellText {
  const shared = useContext(CellTextContext);
  // Outside a list: the app's i18next instance, read without subscribing to its events.
  const i18n = useContext(I18nContext)?.i18n ?? i18next;
  return shared ?? { t: i18n.t, language: i18n.language };
}

/** Translated enum value: `resources:<resource>.enum.<path>.<value>`. */
export function useEnumText(resource: string, path: string): (value: unknown) => string {
  const { t } = useCellText();
  return (value) =>
    t(`resources:${resource}.enum.${path}.${String(value)}`, { defaultValue: String(value) });
}
