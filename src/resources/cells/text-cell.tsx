import { Text } from '@mantine/core';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function TextCell({ value }: CellProps) {
  if (value === undefined || value === null || value === '') return empty;
  const text = String(value);
  return (
    <Text span size="sm" truncate="end" title={text}>
      {text}
    </Text>
  );
}
