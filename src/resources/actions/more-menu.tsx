import '@mantine/core/styles/Menu.css';
import '@mantine/core/styles/Popover.css';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { ActionIcon, Menu } from '@mantine/core';
import { Icon } from '@/components/icon';

/**
 * The "more" menu of a record. Its floating menu mounts on first use (the trigger is a plain
 * button until then): thousands of cards mount fast when a filter changes what is visible.
 */
export function MoreMenu({
  label,
  compact,
  children,
}: {
  label: string;
  compact: boolean;
  children: ReactNode;
}) {
  const [mounted, setMounted] = useState(false);
  const [opened, setOpened] = useState(false);
  const target = useRef<HTMLButtonElement>(null);
  // The mounted menu's trigger replaces the placeholder button: keep the keyboard focus on it.
  useEffect(() => {
    if (mounted) target.current?.focus();
  }, [mounted]);
  const trigger = {
    variant: 'subtle',
    color: 'gray',
    size: compact ? 'md' : 'lg',
    'aria-label': label,
    'data-testid': 'record-more',
  } as const;
  if (!mounted)
    return (
      <ActionIcon
        {...trigger}
        aria-haspopup="menu"
        onClick={() => {
          setMounted(true);
          setOpened(true);
        }}
      >
        <Icon name="dots" size={18} />
      </ActionIcon>
    );
  return (
    <Menu position="bottom-end" withinPortal opened={opened} onChange={setOpened}>
      <Menu.Target>
        <ActionIcon ref={target} {...trigger}>
          <Icon name="dots" size={18} />
        </ActionIcon>
      </Menu.Target>
      <Menu.Dropdown>{children}</Menu.Dropdown>
    </Menu>
  );
}
