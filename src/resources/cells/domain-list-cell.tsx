import { Text } from '@mantine/core';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function DomainListCell({ value }: CellProps) {
  if (!Array.isArray(value) || value.length === 0) return empty;
  const text = value
    .map((d) => (typeof d === 'string' ? d : ((d as { name?: string }).name ?? '')))
    .join(', ');
  return (
    <Text span size="sm" truncate="end" title={text}>
      {text}
    </Text>
  );
}
