/**
 * The direct-viewer page (`/vw/:jumperurl`, no login, no application shell): a centred card with
 * the desktop of the link (name, description, state, booking notice), Start / Stop by state, and
 * "Open in browser", which covers the page with the VNC console (tickets asked with the link's
 * viewer JWT). An unknown or reset link, and the rate limit, get a page of their own.
 * The token stays out of the title and of every request to another origin (there are none); the
 * server sends this page with `Referrer-Policy: no-referrer` and `Cache-Control: no-store`.
 * The console is injected (the app composes it from the viewers feature).
 */
import '@mantine/core/styles/Badge.css';
import '@mantine/core/styles/Skeleton.css';
import { Suspense, useState, type ComponentType, type ReactElement, type ReactNode } from 'react';
import { Button, Center, Group, Loader, Paper, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { DesktopViewerAnswer } from '@/generated/types';
import { ColorSchemeSwitch } from '@/components/color-scheme-switch';
import { Icon } from '@/components/icon';
import { isApiError } from '@/providers/http-client';
import { DirectDesktopCard } from './direct-desktop-card';
import { isRateLimited } from './direct-viewer-api';
import { LanguageSwitcher } from '@/components/language-switcher';
import { useDirectViewer } from './use-direct-viewer';

/** What the page needs of a console: the VNC console of the viewers feature fits. */
export interface DirectConsoleProps {
  id: string;
  /** A new single-use ticket for each connection. */
  fetchTicket: (id: string) => Promise<DesktopViewerAnswer>;
  /** The desktop's name, until the console names it. */
  fallbackName: string;
  /** First in the console's toolbar: the way back to the card. */
  leading: ReactNode;
  /** Buttons of the console's overlay (stopped, disconnected). */
  overlayActions: () => ReactNode;
}

/** The public page with its console. */
export function directViewerPage(Console: ComponentType<DirectConsoleProps>): () => ReactElement {
  return function DirectViewerRoute() {
    return <DirectViewerPage console={Console} />;
  };
}

/** The centred frame of every state of the page, with the language and colour switches. */
function Frame({ children }: { children: ReactNode }) {
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" w={520} maw="100%" component="main" data-testid="direct-viewer">
        <Stack gap="md">
          <Group justify="flex-end" gap={4} wrap="nowrap">
            <LanguageSwitcher />
            <ColorSchemeSwitch />
          </Group>
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}

/** A page that says the link can not be used now, and a way to try again. */
function Problem({
  testId,
  title,
  body,
  onRetry,
}: {
  testId: string;
  title: string;
  body: string;
  onRetry: () => void;
}) {
  const { t } = useTranslation();
  return (
    <Frame>
      <Stack align="center" gap="sm" data-testid={testId} role="alert">
        <Icon name="alert-triangle" size={40} />
        <Title order={1} size="h3" ta="center">
          {title}
        </Title>
        <Text ta="center" c="dimmed">
          {body}
        </Text>
        <Button variant="default" onClick={onRetry} data-testid="direct-retry">
          {t('common:directViewer.retry')}
        </Button>
      </Stack>
    </Frame>
  );
}

export function DirectViewerPage({
  console: Console,
}: {
  console: ComponentType<DirectConsoleProps>;
}) {
  const { t } = useTranslation();
  const { jumperurl = '' } = useParams<{ jumperurl: string }>();
  const viewer = useDirectViewer(jumperurl);
  const [consoleOpen, setConsoleOpen] = useState(false);
  const { data, error } = viewer;

  if (error) {
    if (isRateLimited(error) || (isApiError(error) && error.statusCode === 429))
      return (
        <Problem
          testId="direct-rate-limited"
          title={t('common:directViewer.rateLimitedTitle')}
          body={t('common:directViewer.rateLimitedBody')}
          onRetry={viewer.retry}
        />
      );
    if (isApiError(error) && error.statusCode === 404)
      return (
        <Problem
          testId="direct-invalid"
          title={t('common:directViewer.invalidTitle')}
          body={t('common:directViewer.invalidBody')}
          onRetry={viewer.retry}
        />
      );
    return (
      <Problem
        testId="direct-error"
        title={t('common:directViewer.errorTitle')}
        body={t('common:directViewer.errorBody')}
        onRetry={viewer.retry}
      />
    );
  }

  if (!data)
    return (
      <Frame>
        <Stack gap="sm" aria-busy="true" aria-label={t('common:loading')}>
          <Skeleton height={28} width="60%" />
          <Skeleton height={16} />
          <Skeleton height={36} width="40%" />
        </Stack>
      </Frame>
    );

  if (consoleOpen) {
    const close = () => setConsoleOpen(false);
    return (
      <Suspense
        fallback={
          <Center mih="100vh">
            <Loader aria-label={t('common:loading')} />
          </Center>
        }
      >
        <Console
          id={data.desktopId}
          fetchTicket={viewer.fetchTicket}
          fallbackName={data.vmName}
          leading={
            <Button size="compact-sm" variant="subtle" onClick={close} data-testid="direct-close">
              {t('common:directViewer.close')}
            </Button>
          }
          overlayActions={() => (
            <Button variant="default" onClick={close} data-testid="direct-back">
              {t('common:directViewer.back')}
            </Button>
          )}
        />
      </Suspense>
    );
  }

  return (
    <Frame>
      <DirectDesktopCard
        desktop={data}
        busy={viewer.busy}
        actionError={viewer.actionError}
        onAction={(action) => void viewer.act(action)}
        onOpen={() => setConsoleOpen(true)}
      />
    </Frame>
  );
}
