import '@mantine/core/styles/Menu.css';
import '@mantine/core/styles/Popover.css';
import type { ReactNode } from 'react';
import {
  AppShell,
  Burger,
  Group,
  Menu,
  NavLink,
  Text,
  UnstyledButton,
  VisuallyHidden,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconChevronDown, IconExternalLink } from '@tabler/icons-react';
import { Link, Outlet, useLocation } from 'react-router';
import { useTranslation } from 'react-i18next';
import { ColorSchemeSwitch } from '@/components/color-scheme-switch';
import { Icon } from '@/components/icon';
import { LanguageSwitcher } from '@/components/language-switcher';
import { saveLanguage } from '@/features/profile/language';
import { StatusBar } from '@/features/notifications/status-bar';
import { PROFILE_PATH } from '@/lib/paths';
import { showError } from '@/lib/error-display';
import { useRoleVisibilityRevision } from '@/lib/role-visibility';
import { selectConfig, selectUser, useSessionValue } from '@/lib/session-state';
import { logout } from '@/providers/auth-provider';
import { requestOperation } from '@/providers/http-client';
import { isFileDownload, saveFile } from '@/lib/download';
import { ActionDialogHost } from '@/resources/actions/action-dialogs';
import { buildNavEntries, isEntryActive, type NavEntry } from './nav-items';
import { ProductMark } from './product-mark';
import { MAIN_CONTENT_ID, SkipLink } from './skip-link';

const NAV_ICON_SIZE = 18;

/** Calls a download operation and saves the `{content, mime, name, ext}` it answers as a file. */
async function downloadFile(operation: string): Promise<void> {
  try {
    const file = await requestOperation(operation);
    if (isFileDownload(file)) saveFile(file);
  } catch (error) {
    showError(error);
  }
}

interface NavItemProps {
  /** The entry to render (groups render their children). */
  entry: NavEntry;
  /** Whether a route entry is the current page (any page of its resource). */
  active: (entry: { match: readonly string[] }) => boolean;
  /** Called after an entry is used (closes the navbar on small screens). */
  onNavigate: () => void;
}

function NavItem({ entry, active, onNavigate }: NavItemProps) {
  const { t } = useTranslation();
  const common = {
    label: t(entry.labelKey),
    leftSection: entry.icon ? <Icon name={entry.icon} size={NAV_ICON_SIZE} /> : undefined,
    'data-nav-key': entry.key,
    'data-nav-kind': entry.kind,
  };
  switch (entry.kind) {
    case 'group':
      return (
        <NavLink {...common} defaultOpened>
          {entry.children.map((child) => (
            <NavItem key={child.key} entry={child} active={active} onNavigate={onNavigate} />
          ))}
        </NavLink>
      );
    case 'route':
      return (
        <NavLink
          {...common}
          component={Link}
          to={entry.path}
          active={active(entry)}
          aria-current={active(entry) ? 'page' : undefined}
          onClick={onNavigate}
        />
      );
    case 'link':
      return entry.external ? (
        <NavLink
          {...common}
          component="a"
          href={entry.href}
          target="_blank"
          rel="noreferrer"
          rightSection={
            <>
              <IconExternalLink size={14} aria-hidden="true" />
              <VisuallyHidden>{t('common:nav.newTab')}</VisuallyHidden>
            </>
          }
        />
      ) : (
        <NavLink {...common} component="a" href={entry.href} />
      );
    case 'download':
      return (
        <NavLink
          {...common}
          component="button"
          onClick={() => void downloadFile(entry.operation)}
        />
      );
    case 'logout':
      return (
        <NavLink
          {...common}
          component="button"
          onClick={() => void logout()}
          data-testid="logout"
        />
      );
  }
}

/** Header menu of the logged-in user: the name, the profile (once it is built) and Log out. */
function UserMenu({ name }: { name: string }) {
  const { t } = useTranslation();
  return (
    <Menu position="bottom-end" shadow="md" width={200}>
      <Menu.Target>
        <UnstyledButton
          aria-label={t('common:nav.userMenu', { name })}
          data-testid="user-menu"
          px="xs"
          py={4}
          style={{ borderRadius: 'var(--mantine-radius-md)' }}
        >
          <Group gap={6} wrap="nowrap">
            <Icon name="user" size={NAV_ICON_SIZE} />
            <Text size="sm" visibleFrom="sm" data-testid="user-name" maw={160} truncate="end">
              {name}
            </Text>
            <IconChevronDown size={14} aria-hidden="true" />
          </Group>
        </UnstyledButton>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{name}</Menu.Label>
        {PROFILE_PATH && (
          <Menu.Item
            component={Link}
            to={PROFILE_PATH}
            leftSection={<Icon name="user" size={16} />}
            data-testid="user-menu-profile"
          >
            {t('common:nav.profile')}
          </Menu.Item>
        )}
        <Menu.Item
          leftSection={<Icon name="logout" size={16} />}
          onClick={() => void logout()}
          data-testid="user-menu-logout"
        >
          {t('common:actions.logout')}
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}

export interface AppLayoutProps {
  /** Page to show instead of the matched child route (e.g. the not-found page). */
  children?: ReactNode;
}

/** Authenticated shell: header (mark, switches, user menu) and the navbar from the menu. */
export function AppLayout({ children }: AppLayoutProps) {
  const { t } = useTranslation();
  const [opened, { toggle, close }] = useDisclosure();
  // only the parts it draws: the recycle-bin cutoff arriving does not redraw the shell
  const user = useSessionValue(selectUser);
  const config = useSessionValue(selectConfig);
  // The navbar follows the admin's role visibility live.
  useRoleVisibilityRevision();
  const location = useLocation();
  const entries = user ? buildNavEntries(user.role_id, config) : [];
  const main = entries.filter((entry) => entry.kind !== 'logout');
  const footer = entries.filter((entry) => entry.kind === 'logout');
  const active = (entry: { match: readonly string[] }): boolean =>
    isEntryActive(entry, location.pathname);
  const userName = user?.name ?? user?.username ?? '';

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 240, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <SkipLink />
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={t('common:nav.toggle')}
            />
            <UnstyledButton
              component={Link}
              to="/"
              data-testid="home-link"
              aria-label={t('common:product')}
            >
              <Group gap={8} wrap="nowrap">
                <ProductMark />
                {/* On phones the mark alone leaves room for the switches and the user menu. */}
                <Text fw={700} size="lg" visibleFrom="xs" style={{ whiteSpace: 'nowrap' }}>
                  {t('common:product')}
                </Text>
              </Group>
            </UnstyledButton>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <LanguageSwitcher onChoose={(language) => void saveLanguage(language)} />
            <ColorSchemeSwitch />
            {user && <UserMenu name={userName} />}
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label={t('common:nav.label')}>
        <AppShell.Section grow style={{ overflowY: 'auto' }}>
          {main.map((entry) => (
            <NavItem key={entry.key} entry={entry} active={active} onNavigate={close} />
          ))}
        </AppShell.Section>
        <AppShell.Section>
          {footer.map((entry) => (
            <NavItem key={entry.key} entry={entry} active={active} onNavigate={close} />
          ))}
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main id={MAIN_CONTENT_ID} tabIndex={-1} style={{ outline: 'none' }}>
        <StatusBar />
        {children ?? <Outlet />}
      </AppShell.Main>
      <ActionDialogHost />
    </AppShell>
  );
}
