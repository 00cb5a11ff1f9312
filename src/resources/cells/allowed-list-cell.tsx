import { Text } from '@mantine/core';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** A sharing list: off, everyone of the scope (an empty list), or how many are chosen. */
export function AllowedListCell({ value }: CellProps) {
  const { t } = useCellText();
  if (!Array.isArray(value)) return empty;
  return (
    <Text span size="sm">
      {value.length === 0
        ? t('common:allowed.everyone')
        : t('common:allowed.chosen', { count: value.length })}
    </Text>
  );
}
