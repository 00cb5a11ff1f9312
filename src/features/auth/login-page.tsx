import {
  startTransition,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type FormEvent,
} from 'react';
import {
  Alert,
  Anchor,
  Button,
  Center,
  Group,
  NativeSelect,
  Paper,
  PasswordInput,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { SessionUserCategory, SessionUserProviders } from '@/generated/types';
import { operations } from '@/generated/api';
import { resourceOf } from '@/generated/resources';
import { ColorSchemeSwitch } from '@/components/color-scheme-switch';
import { LanguageSwitcher } from '@/components/language-switcher';
import { SubmitButton } from '@/components/submit-button';
import { usePageTitle } from '@/hooks/use-page-title';
import { whenIdle } from '@/lib/idle';
import { useRequestPending } from '@/lib/pending';
import { followLink, navigateTo } from '@/lib/navigation';
import { decodeToken, getToken, rememberLoginCategory, tokenType } from '@/lib/token';
import { buildPath, request } from '@/providers/http-client';
import { login, logout } from '@/providers/auth-provider';
import { loginErrorText, refusalText, type LoginErrorText } from './login-errors';
import { STALLED_MESSAGE_ID } from '@common/prerendered-login';
import { adoptStaticLogin } from './static-login';

export interface LoginPageProps {
  /** The categories to draw the form with before its own read answers (the build's drawing). */
  drawnCategories?: readonly SessionUserCategory[];
  /** Drawn at build time: with the (hidden) message for a login held while the SPA never loads. */
  drawn?: boolean;
  /** Starts loading the application while the user types (the app composes it). */
  preload?: () => void;
  /** Called with the page a successful login leads to, before going there. */
  onSignedIn?: (to: string) => void;
}

const accountPages = resourceOf('session')?.meta.extraRoutes ?? {};
/** The account pages the login page links to, while their calls are built (null: no link). */
const FORGOT_PASSWORD = operations['session.forgotPassword'].planned
  ? null
  : (accountPages.forgotPassword ?? null);
const SIGN_UP = operations['session.signup'].planned ? null : (accountPages.signup ?? null);

interface CategoryChoice {
  categories: SessionUserCategory[];
  token: string | null;
}

/** A stored category-select token (the guard sends it here): its categories to choose from. */
function storedChoice(): CategoryChoice | null {
  const token = getToken();
  const claims = decodeToken(token);
  if (tokenType(claims) !== 'category-select') return null;
  return { categories: claims?.categories ?? [], token };
}

/**
 * Login page: category, username, password, forgot-password and sign-up links, other providers.
 * A category-select answer (or such a token already stored) turns it into the category choice,
 * which logs in again with that token as the bearer and the chosen category.
 */
export function LoginPage({
  drawnCategories = [],
  drawn = false,
  preload,
  onSignedIn,
}: LoginPageProps) {
  // The error texts' catalogue is not needed to show the form: it loads when the form is sent.
  const { t, i18n } = useTranslation('common');
  usePageTitle(t('common:routes.login'));
  const [categories, setCategories] = useState<readonly SessionUserCategory[]>(drawnCategories);
  const [providers, setProviders] = useState<SessionUserProviders['providers']>([]);
  const [directories, setDirectories] = useState<SessionUserProviders['ldap']>([]);
  const [oidcButtons, setOidcButtons] = useState<SessionUserProviders['oidc']>([]);
  const [samlButtons, setSamlButtons] = useState<SessionUserProviders['saml']>([]);
  const [categoryId, setCategoryId] = useState(drawnCategories[0]?.id ?? '');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // a provider's sign-in that was refused comes back here with the refusal's code (the page may
  // show outside the router: the address is read as it is)
  const [error, setError] = useState<LoginErrorText | null>(() =>
    // drawn at build time there is no address, and no refusal
    typeof window === 'undefined'
      ? null
      : refusalText(new URLSearchParams(window.location.search).get('error')),
  );
  const [choice, setChoice] = useState<CategoryChoice | null>(storedChoice);
  const formRef = useRef<HTMLFormElement>(null);
  // A login sent from the form drawn at build time, sent from here once the form's first reads
  // (the categories among them) have answered, as its button allows.
  const held = useRef(false);
  const [categoriesRead, setCategoriesRead] = useState(false);
  const pending = useRequestPending();
  // the form drawn at build time, if the page came with it, hands over what was typed
  useLayoutEffect(() => {
    held.current = adoptStaticLogin(formRef.current);
  }, []);
  useEffect(() => {
    if (!held.current || pending || !categoriesRead) return;
    held.current = false;
    formRef.current?.requestSubmit();
  }, [pending, categoriesRead]);

  useEffect(() => {
    request('session.categories')
      .then((list) => {
        const visible = (list ?? []).filter((c) => c.frontend !== false);
        setCategories(visible);
        if (visible[0]) setCategoryId((current) => current || visible[0]?.id || '');
      })
      .catch(() => setCategories([]))
      .finally(() => setCategoriesRead(true));
    request('session.providers')
      .then((answer) => {
        setProviders(answer?.providers ?? []);
        setDirectories(answer?.ldap ?? []);
        setOidcButtons(answer?.oidc ?? []);
        setSamlButtons(answer?.saml ?? []);
      })
      .catch(() => setProviders([]));
    // Once the form is interactive, the application is fetched while the user types.
    return preload ? whenIdle(preload) : undefined;
  }, [preload]);

  const finish = async (params: { categoryId: string; token?: string | null }): Promise<void> => {
    setError(null);
    // The account steps that may follow (disclaimer, expired password) continue in this category.
    rememberLoginCategory(params.categoryId);
    // a category chosen from a token continues with that token alone: the person may have typed
    // nothing (a provider's sign-in), and an empty username is no login form
    const result = await login(params.token ? params : { username, password, ...params });
    if (result.categories) {
      setChoice({ categories: result.categories, token: getToken() });
      return;
    }
    if (result.success && result.redirectTo) {
      const to = result.redirectTo;
      onSignedIn?.(to);
      // A transition keeps the login form on screen until the (preloaded) app can render, instead
      // of flashing the suspense fallback and waiting out React's fallback throttle.
      startTransition(() => navigateTo(to, { replace: true }));
      return;
    }
    if (result.error) {
      const text = loginErrorText(result.error);
      if (text.maintenance) navigateTo('/maintenance', { replace: true });
      else setError(text);
    }
  };

  const onSubmit = (event: FormEvent<HTMLFormElement>): void => {
    event.preventDefault();
    void i18n.loadNamespaces('errors');
    void finish({ categoryId });
  };

  const otherProviders = providers.filter((p) => p !== 'form');
  // the chosen category's LDAP directory also signs in through the form
  const directory = directories.find((d) => d.category_id === categoryId);
  // the chosen category's OpenID Connect provider signs in through its own button
  const oidc = oidcButtons.find((p) => p.category_id === categoryId);
  // a navigation, not a form: the provider's 302 leads to another origin
  const oidcAction = `${buildPath(operations['session.oidcLogin'])}?category_id=${encodeURIComponent(categoryId)}&redirect=/`;
  // and its SAML identity provider through another
  const saml = samlButtons.find((p) => p.category_id === categoryId);
  const samlAction = saml
    ? `${buildPath(operations['session.samlLogin'])}?provider=${encodeURIComponent(saml.id)}&redirect=/`
    : '';
  const loginAction = (provider: string): string =>
    `${buildPath(operations['session.login'])}?provider=${encodeURIComponent(provider)}&category_id=${encodeURIComponent(categoryId)}&redirect=/`;

  if (choice) {
    return (
      <Center mih="100vh" p="md">
        <Paper withBorder p="xl" w={420} component="main">
          <Stack>
            <Title order={1} size="h3">
              {t('common:login.selectCategory')}
            </Title>
            {choice.categories.map((category) => (
              <Stack key={category.id} gap={4}>
                <Button
                  variant="light"
                  disabled={category.maintenance === true}
                  onClick={() => void finish({ categoryId: category.id, token: choice.token })}
                >
                  {category.name}
                </Button>
                {category.maintenance && (
                  <Text size="sm" c="orange.9">
                    {t('common:login.categoryMaintenance')}
                  </Text>
                )}
              </Stack>
            ))}
            <Button variant="default" onClick={() => void logout().then(() => setChoice(null))}>
              {t('common:actions.logout')}
            </Button>
          </Stack>
        </Paper>
      </Center>
    );
  }

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" w={420} component="main">
        <form ref={formRef} onSubmit={onSubmit} aria-labelledby="login-title">
          <Stack>
            <Group justify="space-between" wrap="nowrap">
              <Title order={1} size="h3" id="login-title">
                {t('common:product')}
              </Title>
              <Group gap={4} wrap="nowrap">
                <LanguageSwitcher />
                <ColorSchemeSwitch />
              </Group>
            </Group>
            <Text size="sm" c="dimmed">
              {t('common:login.subtitle')}
            </Text>
            {categories.length > 1 && (
              <NativeSelect
                label={t('common:login.category')}
                name="category"
                value={categoryId}
                onChange={(event) => setCategoryId(event.currentTarget.value)}
                data={categories.map((c) => ({ value: c.id, label: c.name }))}
                data-testid="login-category"
              />
            )}
            <TextInput
              label={t('common:login.username')}
              name="username"
              autoComplete="username"
              required
              value={username}
              onChange={(event) => setUsername(event.currentTarget.value)}
            />
            <PasswordInput
              label={t('common:login.password')}
              name="password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(event) => setPassword(event.currentTarget.value)}
            />
            {directory && (
              <Text size="xs" c="dimmed" data-testid="login-ldap-hint">
                {t('common:login.ldapHint', { label: directory.label })}
              </Text>
            )}
            {error && <LoginErrorAlert error={error} />}
            <SubmitButton fullWidth data-testid="login-submit">
              {t('common:login.submit')}
            </SubmitButton>
            {drawn && (
              <Text id={STALLED_MESSAGE_ID} role="alert" size="sm" c="red.8" display="none">
                {t('common:login.notLoaded')}
              </Text>
            )}
            {(FORGOT_PASSWORD || SIGN_UP) && (
              <Group justify="space-between">
                {FORGOT_PASSWORD && (
                  <Anchor href={FORGOT_PASSWORD} onClick={followLink(FORGOT_PASSWORD)} size="sm">
                    {t('common:login.forgotPassword')}
                  </Anchor>
                )}
                {SIGN_UP && (
                  <Anchor
                    href={SIGN_UP}
                    onClick={followLink(SIGN_UP)}
                    size="sm"
                    data-testid="login-signup"
                  >
                    {t('common:login.signUp')}
                  </Anchor>
                )}
              </Group>
            )}
          </Stack>
        </form>
        {(otherProviders.length > 0 || oidc || saml) && (
          <Stack mt="md" gap="xs">
            <Text size="sm" c="dimmed">
              {t('common:login.otherProviders')}
            </Text>
            {otherProviders.map((provider) => (
              <form key={provider} method="post" action={loginAction(provider)}>
                <Button type="submit" variant="default" fullWidth>
                  {t(`common:login.providers.${provider}`)}
                </Button>
              </form>
            ))}
            {oidc && (
              <Button
                component="a"
                href={oidcAction}
                variant="default"
                fullWidth
                data-testid="login-oidc"
                leftSection={
                  oidc.icon ? <img src={oidc.icon} alt="" width={18} height={18} /> : undefined
                }
              >
                {t('common:login.oidcButton', { label: oidc.label })}
              </Button>
            )}
            {saml && (
              <Button
                component="a"
                href={samlAction}
                variant="default"
                fullWidth
                data-testid="login-saml"
                leftSection={
                  saml.icon ? <img src={saml.icon} alt="" width={18} height={18} /> : undefined
                }
              >
                {t('common:login.samlButton', { label: saml.label })}
              </Button>
            )}
          </Stack>
        )}
      </Paper>
    </Center>
  );
}

/** A failed login's message, in the error texts' catalogue when it names one of its keys. */
function LoginErrorAlert({ error }: { error: LoginErrorText }) {
  const { t, ready } = useTranslation(['common', 'errors']);
  if (!ready) return null;
  return (
    <Alert color="red" role="alert" data-testid="login-error">
      {t(error.key, error.values)}
    </Alert>
  );
}
