/** Test helpers of the form engine: English catalogues and Mantine around a component. */
import { MantineProvider } from '@mantine/core';
import { render, type RenderResult } from '@testing-library/react';
import i18next, { type i18n as I18n } from 'i18next';
import type { ReactElement, ReactNode } from 'react';
import { I18nextProvider, initReactI18next } from 'react-i18next';
import common from '../../../locales/en/common.json';
import errors from '../../../locales/en/errors.json';
import resources from '../../../locales/en/resources.json';

// jsdom has no FontFaceSet; Mantine's autosize Textarea listens on it.
if (typeof document !== 'undefined' && !('fonts' in document)) {
  const noop = (): void => undefined;
  Object.defineProperty(document, 'fonts', {
    value: { addEventListener: noop, removeEventListener: noop },
    configurable: true,
  });
}

/** A fresh i18next instance with the English catalogues (synchronous). */
export function createTestI18n(): I18n {
  const instance = i18next.createInstance();
  void instance.use(initReactI18next).init({
    lng: 'en',
    ns: ['common', 'errors', 'resources'],
    defaultNS: 'common',
    resources: { en: { common, errors, resources } },
    interpolation: { escapeValue: false },
    initAsync: false,
  });
  return instance;
}

export const testI18n = createTestI18n();

export function Providers({ children }: { children: ReactNode }) {
  return (
    <I18nextProvider i18n={testI18n}>
      <MantineProvider>{children}</MantineProvider>
    </I18nextProvider>
  );
}

export function renderWithProviders(ui: ReactElement): RenderResult {
  return render(ui, { wrapper: Providers });
}
