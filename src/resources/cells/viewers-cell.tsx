import '@mantine/core/styles/Badge.css';
import { Badge, Group } from '@mantine/core';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function ViewersCell({ value }: CellProps) {
  const { t } = useCellText();
  if (!Array.isArray(value) || value.length === 0) return empty;
  return (
    <Group gap={4} wrap="wrap">
      {(value as string[]).map((viewer) => (
        <Badge key={viewer} size="xs" variant="default">
          {t(`common:viewers.${viewer}`)}
        </Badge>
      ))}
    </Group>
  );
}
