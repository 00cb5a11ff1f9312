import { Text } from '@mantine/core';
import { useCellText } from './cell-text';
import type { CellProps } from './cell-types';

/**
 * A desktop's place in the start queue, or the percent done of its disk's (`copy_disk`) or its
 * media's (`copy_media`) copy to a host.
 */
export function QueueCell({ value }: CellProps) {
  const { t } = useCellText();
  const queue = value as { position?: number; event?: string; percent?: number } | null;
  if (typeof queue?.percent === 'number')
    return (
      <Text span size="xs" c="blue.8" data-testid="record-progress">
        {queue.event === 'copy_media'
          ? t('common:desktops.copyingMedia', { percent: queue.percent })
          : t('common:desktops.copyingDisk', { percent: queue.percent })}
      </Text>
    );
  const position = queue?.position;
  if (typeof position !== 'number') return null;
  return (
    <Text span size="xs" c="orange.9" data-testid="record-queue">
      {t('common:desktops.queuePosition', { position })}
    </Text>
  );
}
