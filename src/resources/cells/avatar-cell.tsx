import '@mantine/core/styles/Avatar.css';
import { Avatar } from '@mantine/core';
import type { CellProps } from './cell-types';

/** A user's photo; their initial when there is none (the name sits next to it). */
export function AvatarCell({ value, record }: CellProps) {
  const owner = record.user_name ?? record.name;
  const name = typeof owner === 'string' ? owner : '';
  const src = typeof value === 'string' && value ? value : null;
  return (
    <Avatar src={src} size="sm" radius="xl" alt="" aria-hidden>
      {name.slice(0, 1).toUpperCase()}
    </Avatar>
  );
}
