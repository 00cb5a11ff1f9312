import { Text } from '@mantine/core';
import { formatDate } from '@/lib/dates';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function WireDateCell({ value }: CellProps) {
  const text = formatDate(value as string | null);
  if (!text) return empty;
  return (
    <Text span size="sm">
      {text}
    </Text>
  );
}
