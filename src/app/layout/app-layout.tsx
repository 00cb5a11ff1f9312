import { AppShell, Burger, Group, NavLink, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, Outlet, useLocation } from 'react-router';
import { useTranslation } from 'react-i18next';
import { ColorSchemeSwitch } from '@/components/color-scheme-switch';
import { LanguageSwitcher } from '@/components/language-switcher';
import { showError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import { logout } from '@/providers/auth-provider';
import { request } from '@/providers/http-client';
import { buildNavEntries, type NavEntry } from './nav-items';

async function downloadVpn(operation: string): Promise<void> {
  try {
    const file = await request<{ content: string; mime: string; name: string; ext: string } | null>(
      operation,
    );
    if (!file) return;
    const url = URL.createObjectURL(new Blob([file.content], { type: file.mime }));
    const anchor = document.createElement('a');
    anchor.href = url;
    anchor.download = `${file.name}.${file.ext}`;
    anchor.click();
    URL.revokeObjectURL(url);
  } catch (error) {
    showError(error);
  }
}

function NavItem({ entry, active }: { entry: NavEntry; active: (path: string) => boolean }) {
  const { t } = useTranslation();
  const label = t(`common:nav.${entry.key}`);
  switch (entry.kind) {
    case 'route':
      if (entry.children?.length) {
        return (
          <NavLink label={label} defaultOpened>
            {entry.children.map((child) => (
              <NavItem key={child.key} entry={child} active={active} />
            ))}
          </NavLink>
        );
      }
      return <NavLink component={Link} to={entry.path} label={label} active={active(entry.path)} />;
    case 'external':
      return (
        <NavLink component="a" href={entry.href} target="_blank" rel="noreferrer" label={label} />
      );
    case 'vpn':
      return (
        <NavLink
          component="button"
          label={label}
          onClick={() => void downloadVpn(entry.operation)}
        />
      );
    case 'logout':
      return (
        <NavLink
          component="button"
          label={label}
          onClick={() => void logout()}
          data-testid="logout"
        />
      );
  }
}

/** Authenticated shell: header with switches and user, navbar per spec section 2. */
export function AppLayout() {
  const { t } = useTranslation();
  const [opened, { toggle }] = useDisclosure();
  const { user, config } = useSessionState();
  const location = useLocation();
  const entries = user ? buildNavEntries(user.role_id, config) : [];
  const active = (path: string): boolean =>
    location.pathname === path || location.pathname.startsWith(`${path}/`);

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={t('common:nav.toggle')}
            />
            <Text fw={700} component={Link} to="/desktops">
              {t('common:product')}
            </Text>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <LanguageSwitcher />
            <ColorSchemeSwitch />
            <Text size="sm" visibleFrom="sm" data-testid="user-name">
              {user?.name ?? user?.username}
            </Text>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label={t('common:nav.label')}>
        {entries.map((entry) => (
          <NavItem key={entry.key} entry={entry} active={active} />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
