import '@mantine/core/styles/Menu.css';
import '@mantine/core/styles/Popover.css';
import '@mantine/core/styles/Tooltip.css';
import { memo, useEffect, useRef, useState } from 'react';
import { ActionIcon, Button, Group, Menu, Text, Tooltip } from '@mantine/core';
import type { Desktop } from '@/generated/types';
import { translateError } from '@/lib/error-display';
import { desktopState } from '@/generated/policy';
import { OPENABLE_STATES, TRANSIENT_STATES, type OpenProgress } from './open-flow';
import { useOpenDesktop } from './use-open-desktop';
import { orderedViewers, viewerBlocker } from './viewer-order';
import { Icon } from '@/components/icon';
import { useCellText } from '@/resources/cells/cell-text';

export interface OpenDesktopMenuProps {
  /** The desktop to open. */
  desktop: Desktop;
}

/** Progress line of the one-click Open (starting, queue position, opening, error). */
export function OpenProgressText({ progress }: { progress: OpenProgress }) {
  const { t } = useCellText();
  switch (progress.phase) {
    case 'starting':
      return (
        <Text size="xs" c="dimmed" role="status" data-testid="open-progress" data-phase="starting">
          {t('common:open.starting')}
        </Text>
      );
    case 'waiting':
      return (
        <Text size="xs" c="dimmed" role="status" data-testid="open-progress" data-phase="waiting">
          {typeof progress.queuePosition === 'number'
            ? t('common:open.queued', { position: progress.queuePosition })
            : t('common:open.waiting')}
        </Text>
      );
    case 'opening':
      return (
        <Text size="xs" c="dimmed" role="status" data-testid="open-progress" data-phase="opening">
          {t('common:open.opening')}
        </Text>
      );
    case 'error':
      return (
        <Text size="xs" c="red.8" role="alert" data-testid="open-progress" data-phase="error">
          {translateError(progress.error as never)}
        </Text>
      );
    default:
      return null;
  }
}

/**
 * "Open" (starts a stopped desktop, then opens the preferred viewer) plus an "Open with" menu of
 * the desktop's viewers in the default order. Viewers that cannot work (RDP without wireguard)
 * are disabled with the reason shown.
 */
export const OpenDesktopMenu = memo(function OpenDesktopMenu({ desktop }: OpenDesktopMenuProps) {
  const { t } = useCellText();
  const { progress, preferred, open, busy } = useOpenDesktop(desktop);
  const [menuMounted, setMenuMounted] = useState(false);
  const [menuOpen, setMenuOpen] = useState(false);
  const menuTarget = useRef<HTMLButtonElement>(null);
  // The mounted menu's trigger replaces the placeholder button: keep the keyboard focus on it.
  useEffect(() => {
    if (menuMounted) menuTarget.current?.focus();
  }, [menuMounted]);
  const viewers = orderedViewers(desktop.viewers);
  if (!viewers.length) return null;
  const state = desktop.state;
  // Stopped: start then open; started: open; on the way to started: wait then open.
  const stateBlocked = !(
    state === desktopState.stopped ||
    OPENABLE_STATES.includes(state) ||
    TRANSIENT_STATES.includes(state)
  );
  const noneUsable = preferred === null;
  const reason = noneUsable
    ? t('common:open.noUsableViewer')
    : stateBlocked
      ? t('common:open.notNow')
      : null;

  const openButton = (
    <Button
      size="compact-sm"
      variant="filled"
      loading={busy}
      disabled={busy || noneUsable || stateBlocked}
      onClick={() => open()}
      data-testid="desktop-open"
      data-viewer={preferred ?? ''}
      style={{ borderTopRightRadius: 0, borderBottomRightRadius: 0 }}
    >
      {state === desktopState.stopped ? t('common:open.startAndOpen') : t('common:open.open')}
    </Button>
  );

  // The Open-with trigger, the same before (placeholder) and after the menu is mounted.
  const openWithProps = {
    size: 26,
    variant: 'filled',
    'aria-label': t('common:open.openWith'),
    disabled: busy || stateBlocked,
    'data-testid': 'desktop-open-with',
    style: {
      borderTopLeftRadius: 0,
      borderBottomLeftRadius: 0,
      borderLeft: '1px solid var(--mantine-color-body)',
    },
  } as const;

  return (
    <div>
      <Group gap={0} wrap="nowrap">
        {reason ? (
          <Tooltip label={reason} withArrow>
            <span>{openButton}</span>
          </Tooltip>
        ) : (
          openButton
        )}
        {/* The menu (floating-ui, portal) mounts on first use: 5,000 cards mount fast when filtered. */}
        {menuMounted ? (
          <Menu
            position="bottom-end"
            withinPortal
            shadow="md"
            opened={menuOpen}
            onChange={setMenuOpen}
          >
            <Menu.Target>
              <ActionIcon ref={menuTarget} {...openWithProps}>
                <Icon name="chevron-down" size={16} />
              </ActionIcon>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Label>{t('common:open.openWith')}</Menu.Label>
              {viewers.map((viewer) => {
                const blocker = viewerBlocker(desktop, viewer);
                const item = (
                  <Menu.Item
                    key={viewer}
                    disabled={!!blocker}
                    onClick={() => open(viewer)}
                    data-testid={`open-viewer-${viewer}`}
                    rightSection={
                      viewer === preferred ? (
                        <Text size="xs" c="dimmed">
                          {t('common:open.lastUsed')}
                        </Text>
                      ) : null
                    }
                  >
                    <Text size="sm">{t(`common:viewers.${viewer}`)}</Text>
                    {blocker && (
                      <Text size="xs" c="dimmed" maw={220} data-testid="viewer-blocker">
                        {t(`common:open.blocker.${blocker}`)}
                      </Text>
                    )}
                  </Menu.Item>
                );
                return blocker ? (
                  <Tooltip
                    key={viewer}
                    label={t(`common:open.blocker.${blocker}`)}
                    position="left"
                    withArrow
                  >
                    <div>{item}</div>
                  </Tooltip>
                ) : (
                  item
                );
              })}
            </Menu.Dropdown>
          </Menu>
        ) : (
          <ActionIcon
            {...openWithProps}
            onClick={() => {
              setMenuMounted(true);
              setMenuOpen(true);
            }}
          >
            <Icon name="chevron-down" size={16} />
          </ActionIcon>
        )}
      </Group>
      <OpenProgressText progress={progress} />
    </div>
  );
});
