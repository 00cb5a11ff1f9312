import { Text } from '@mantine/core';
import { formatDate, formatRelative } from '@/lib/dates';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** Epoch seconds as relative text ("5 minutes ago"), the absolute time on hover. */
export function EpochDateCell({ value }: CellProps) {
  const { language } = useCellText();
  const absolute = formatDate(value as number | null);
  if (!absolute) return empty;
  return (
    <Text span size="sm" c="dimmed" title={absolute}>
      <time dateTime={new Date((value as number) * 1000).toISOString()}>
        {formatRelative(value as number, language)}
      </time>
    </Text>
  );
}
