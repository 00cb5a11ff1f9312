/**
 * The login form drawn at build time, in each offered language: the build puts it in the page the
 * server answers `/login` with, so the form is on screen (and takes typing) before the SPA's
 * script has loaded and evaluated; `features/auth/static-login.ts` hands what was typed over to the live form.
 * Runs in Node (the build's server-side render), never in the browser.
 */
import { renderToString } from 'react-dom/server';
import { createInstance, type Resource } from 'i18next';
import { I18nextProvider, initReactI18next } from 'react-i18next';
import { MantineProvider } from '@mantine/core';
import { cssVariablesResolver, themeWithLabels } from '@/app/theme';
import { DEFAULT_LANGUAGE, LANGUAGES, type Language } from '@/i18n/languages';
import { LoginPage } from '@/features/auth/login-page';

export { LANGUAGES };

/** One language's login page: its markup, its title and the `lang` of its document. */
export interface PrerenderedLogin {
  html: string;
  title: string;
  lang: string;
}

/**
 * The login form in `language`, from its catalogues (`common` of the language and of English, the
 * fallback), drawn the way the SPA draws it on the login path (same theme, same provider).
 */
export function renderLogin(
  language: Language,
  catalogues: Record<string, Record<string, unknown>>,
): PrerenderedLogin {
  const resources: Resource = {};
  for (const [code, common] of Object.entries(catalogues)) resources[code] = { common };
  const i18n = createInstance();
  void i18n.use(initReactI18next).init({
    lng: language,
    fallbackLng: DEFAULT_LANGUAGE,
    ns: ['common'],
    defaultNS: 'common',
    resources,
    initAsync: false,
    interpolation: { escapeValue: false },
    returnNull: false,
    returnEmptyString: false,
    react: { useSuspense: false },
  });
  const t = i18n.getFixedT(language, 'common');
  const html = renderToString(
    <I18nextProvider i18n={i18n}>
      <MantineProvider
        theme={themeWithLabels(t('actions.close'))}
        defaultColorScheme="auto"
        cssVariablesResolver={cssVariablesResolver}
      >
        <LoginPage />
      </MantineProvider>
    </I18nextProvider>,
  );
  return {
    html,
    title: `${t('product')} - ${t('routes.login')}`,
    lang: language.replace('_', '-'),
  };
}
