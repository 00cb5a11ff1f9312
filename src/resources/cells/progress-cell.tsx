import '@mantine/core/styles/Progress.css';
import { Group, Progress, Text } from '@mantine/core';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** A progress answer: `percentage` (desktops, templates, disks) or a download's `received_percent`. */
interface ProgressValue {
  percentage?: number;
  received_percent?: number;
  time_left?: string;
}

export function ProgressCell({ value }: CellProps) {
  const { t } = useCellText();
  const progress = value as ProgressValue | null;
  const percentage = progress?.percentage ?? progress?.received_percent;
  if (typeof percentage !== 'number') return empty;
  return (
    <Group gap="xs" wrap="nowrap" data-testid="record-progress" data-value={Math.round(percentage)}>
      <Progress
        value={percentage}
        w={80}
        aria-label={t('common:progress', { value: Math.round(percentage) })}
      />
      <Text span size="xs">{`${Math.round(percentage)} %`}</Text>
      {progress?.time_left && (
        <Text span size="xs" c="dimmed">
          {progress.time_left}
        </Text>
      )}
    </Group>
  );
}
