import { Text } from '@mantine/core';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** An object naming something (`{ id, name }`): its name. */
export function NamedCell({ value }: CellProps) {
  const name = (value as { name?: unknown } | null | undefined)?.name;
  if (typeof name !== 'string' || !name) return empty;
  return (
    <Text span size="sm" truncate="end" title={name}>
      {name}
    </Text>
  );
}
