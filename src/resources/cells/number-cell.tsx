import { Text } from '@mantine/core';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function NumberCell({ value, meta }: CellProps) {
  const { language } = useCellText();
  if (typeof value !== 'number') return empty;
  const text = new Intl.NumberFormat(language.replace('_', '-')).format(value);
  return (
    <Text span size="sm">
      {meta.unit ? `${text} ${meta.unit}` : text}
    </Text>
  );
}
