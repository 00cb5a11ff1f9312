import { useEffect, useState } from 'react';
import { Center, Loader, Paper, Stack, Text, Title } from '@mantine/core';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { SessionUserMaintenanceText } from '@/generated/types';
import { usePageTitle } from '@/hooks/use-page-title';
import { getToken } from '@/lib/token';
import { request } from '@/providers/http-client';
import { HOME_PATH } from '@/lib/paths';

export const MAINTENANCE_POLL_MS = 5000;

/** Maintenance page: shows the frontend text and polls the maintenance flag every 5 s. */
export function MaintenancePage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [text, setText] = useState<SessionUserMaintenanceText | null>(null);
  usePageTitle(t('common:routes.maintenance'));
  // The admin's text only while the admin enabled it; the default text otherwise.
  const shown = text?.enabled ? text : null;

  useEffect(() => {
    request('session.maintenanceText')
      .then(setText)
      .catch(() => setText(null));
  }, []);

  useEffect(() => {
    const timer = setInterval(() => {
      // Plain fetch: a 503 here must not re-trigger the client's maintenance redirect.
      const token = getToken();
      fetch('/api/v3/maintenance', {
        headers: {
          Accept: 'application/json',
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
        },
      })
        .then(async (response) => {
          if (!response.ok) return;
          const value: unknown = await response.json();
          const active =
            typeof value === 'boolean' ? value : !!(value as { enabled?: boolean } | null)?.enabled;
          if (!active) navigate(HOME_PATH, { replace: true });
        })
        .catch(() => undefined);
    }, MAINTENANCE_POLL_MS);
    return () => clearInterval(timer);
  }, [navigate]);

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" maw={560}>
        <Stack align="center">
          <Title order={1}>{shown?.title || t('common:maintenance.title')}</Title>
          <Text ta="center">{shown?.body || t('common:maintenance.body')}</Text>
          <Loader size="sm" aria-label={t('common:loading')} />
        </Stack>
      </Paper>
    </Center>
  );
}
