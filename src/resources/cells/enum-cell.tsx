import { Text } from '@mantine/core';
import { useEnumText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function EnumCell({ resource, meta, value }: CellProps) {
  const text = useEnumText(resource, meta.path);
  if (value === undefined || value === null || value === '') return empty;
  return (
    <Text span size="sm" truncate="end">
      {text(value)}
    </Text>
  );
}
