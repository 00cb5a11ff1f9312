import { Text } from '@mantine/core';
import { formatDate } from '@/lib/dates';
import { useCellText } from './cell-text';
import type { CellProps } from './cell-types';

export function ScheduledShutdownCell({ value }: CellProps) {
  const { t } = useCellText();
  const text = formatDate((value as { shutdown?: string | false } | null)?.shutdown);
  if (!text) return null;
  return (
    <Text span size="xs" c="orange.9">
      {t('common:desktops.scheduledShutdown', { date: text })}
    </Text>
  );
}
