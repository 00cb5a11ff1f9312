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
import { CATEGORY_OPTIONS } from '@common/prerendered-login';
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

/** The categories the form with a category choice is drawn with, their options then replaced. */
const PLACEHOLDERS = ['category-placeholder-1', 'category-placeholder-2'].map((id) => ({
  id,
  name: id,
}));
const PLACEHOLDER_OPTIONS = new RegExp(
  PLACEHOLDERS.map(({ id }) => `<option value="${id}"[^>]*>${id}</option>`).join(''),
);

/**
 * The login form in `language`, from its catalogues (`common` of the language and of English, the
 * fallback), drawn the way the SPA draws it on the login path (same theme, same provider); with
 * `withCategories`, also its category choice, whose options are `CATEGORY_OPTIONS` for the
 * server to fill.
 */
export function renderLogin(
  language: Language,
  catalogues: Record<string, Record<string, unknown>>,
  withCategories = false,
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
        <LoginPage drawn drawnCategories={withCategories ? PLACEHOLDERS : []} />
      </MantineProvider>
    </I18nextProvider>,
  );
  if (withCategories && !PLACEHOLDER_OPTIONS.test(html))
    throw new Error('the drawn category choice has no options to replace');
  return {
    html: withCategories ? html.replace(PLACEHOLDER_OPTIONS, CATEGORY_OPTIONS) : html,
    title: `${t('product')} - ${t('routes.login')}`,
    lang: language.replace('_', '-'),
  };
}
