import { Text } from '@mantine/core';
import { useCellText } from './cell-text';
import type { CellProps } from './cell-types';

export function QueueCell({ value }: CellProps) {
  const { t } = useCellText();
  const position = (value as { position?: number } | null)?.position;
  if (typeof position !== 'number') return null;
  return (
    <Text span size="xs" c="orange.9" data-testid="record-queue">
      {t('common:desktops.queuePosition', { position })}
    </Text>
  );
}
