import '@mantine/core/styles/Badge.css';
import '@mantine/core/styles/Card.css';
import '@mantine/core/styles/SegmentedControl.css';
import '@mantine/core/styles/Switch.css';
import '@mantine/core/styles/Tabs.css';
import { useDeferredValue, useEffect, useMemo, useState } from 'react';
import {
  Alert,
  Button,
  Group,
  SegmentedControl,
  Stack,
  Switch,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { Link } from 'react-router';
import { useCan, useList } from '@refinedev/core';
import { resources } from '@/generated/resources';
import { useTranslation } from 'react-i18next';
import type { Desktop } from '@/generated/types';
import { useSessionState } from '@/lib/session-state';
import { translateError } from '@/lib/error-display';
import { DesktopCollection, type DesktopView } from './desktop-collection';
import { filterDesktops, warmFilter, type DesktopSection } from './desktop-filter';

export const VIEW_STORAGE_KEY = 'desktopsView';
/** The New desktop route, from the generated resource. */
const CREATE_PATH = resources.find((r) => r.name === 'desktops')?.create ?? null;

function readView(): DesktopView {
  try {
    return localStorage.getItem(VIEW_STORAGE_KEY) === 'list' ? 'list' : 'grid';
  } catch {
    return 'grid';
  }
}

/** Desktops page: grid (default) or list, filter, started-only, persistent/temporary tabs. */
export function DesktopsPage() {
  const { t } = useTranslation();
  const { config } = useSessionState();
  const [view, setView] = useState<DesktopView>(readView);
  const [text, setText] = useState('');
  const [startedOnly, setStartedOnly] = useState(false);
  const [tab, setTab] = useState<DesktopSection>('persistent');
  const deferredText = useDeferredValue(text);
  const { data: canCreate } = useCan({ resource: 'desktops', action: 'create' });
  const showTemporal = !!config?.show_temporal_tab;

  const { result, query } = useList<Desktop>({
    resource: 'desktops',
    pagination: { mode: 'off' },
    liveMode: 'manual',
    errorNotification: false,
  });
  const all = result.data;
  const section: DesktopSection = showTemporal ? tab : 'all';
  const desktops = useMemo(
    () => filterDesktops(all, deferredText, startedOnly, section),
    [all, deferredText, startedOnly, section],
  );
  // Prepare the filter's lower-cased texts while idle, so the first keystroke does not pay for them.
  useEffect(() => {
    if (typeof requestIdleCallback !== 'function') return;
    const handle = requestIdleCallback(() => warmFilter(all));
    return () => cancelIdleCallback(handle);
  }, [all]);

  const changeView = (next: string): void => {
    const value: DesktopView = next === 'list' ? 'list' : 'grid';
    setView(value);
    try {
      localStorage.setItem(VIEW_STORAGE_KEY, value);
    } catch {
      // not persisted
    }
  };

  const collection = (
    <DesktopCollection desktops={desktops} view={view} label={t('resources:desktops.title')} />
  );

  return (
    <Stack gap="sm">
      <Group justify="space-between" align="flex-end">
        <Title order={1} size="h2">
          {t('resources:desktops.title')}
        </Title>
        <Group gap="sm" align="flex-end">
          {CREATE_PATH && canCreate?.can !== false && (
            <Button component={Link} to={CREATE_PATH} data-testid="new-desktop">
              {t('resources:desktops.actions.create')}
            </Button>
          )}
          <TextInput
            aria-label={t('common:desktops.filter')}
            placeholder={t('common:desktops.filter')}
            value={text}
            onChange={(event) => setText(event.currentTarget.value)}
            data-testid="desktops-filter"
          />
          <Switch
            label={t('common:desktops.startedOnly')}
            checked={startedOnly}
            onChange={(event) => setStartedOnly(event.currentTarget.checked)}
          />
          <SegmentedControl
            aria-label={t('common:desktops.view')}
            value={view}
            onChange={changeView}
            data={[
              { value: 'grid', label: t('common:desktops.grid') },
              { value: 'list', label: t('common:desktops.list') },
            ]}
            data-testid="desktops-view"
          />
        </Group>
      </Group>
      {query.isError && (
        <Alert color="red" role="alert">
          {translateError(query.error as never)}
        </Alert>
      )}
      {!query.isLoading && !desktops.length && <Text c="dimmed">{t('common:desktops.empty')}</Text>}
      {showTemporal ? (
        <Tabs
          value={tab}
          onChange={(value) => setTab(value === 'temporary' ? 'temporary' : 'persistent')}
          keepMounted={false}
        >
          <Tabs.List>
            <Tabs.Tab value="persistent">{t('common:desktops.persistent')}</Tabs.Tab>
            <Tabs.Tab value="temporary">{t('common:desktops.temporary')}</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="persistent" pt="sm">
            {collection}
          </Tabs.Panel>
          <Tabs.Panel value="temporary" pt="sm">
            {collection}
          </Tabs.Panel>
        </Tabs>
      ) : (
        collection
      )}
    </Stack>
  );
}
