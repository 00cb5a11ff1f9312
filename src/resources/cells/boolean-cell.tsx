import { Group, Text } from '@mantine/core';
import { Icon } from '@/components/icon';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function BooleanCell({ value }: CellProps) {
  const { t } = useCellText();
  if (typeof value !== 'boolean') return empty;
  return (
    <Group gap={4} wrap="nowrap">
      <Icon name={value ? 'check' : 'x'} size={16} />
      <Text span size="sm">
        {t(value ? 'common:yes' : 'common:no')}
      </Text>
    </Group>
  );
}
