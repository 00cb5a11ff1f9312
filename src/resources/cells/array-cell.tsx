import { Stack, Text } from '@mantine/core';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** One line of a list item: its name, else (an object without one) its values joined. */
function itemText(item: unknown): string {
  if (!item || typeof item !== 'object') return String(item);
  const { name } = item as { name?: unknown };
  if (typeof name === 'string') return name;
  return Object.values(item)
    .filter((part) => part !== null && part !== undefined && part !== '')
    .map((part) => (typeof part === 'object' ? JSON.stringify(part) : String(part)))
    .join(' · ');
}

export function ArrayCell({ value }: CellProps) {
  if (!Array.isArray(value) || value.length === 0) return empty;
  // Objects without a name (rows of a report) read one per line.
  if (value.some((item) => item && typeof item === 'object' && !('name' in item)))
    return (
      <Stack gap={2} data-testid="array-items">
        {value.map((item, index) => (
          <Text key={index} span size="sm">
            {itemText(item)}
          </Text>
        ))}
      </Stack>
    );
  const text = value.map(itemText).join(', ');
  return (
    <Text span size="sm" truncate="end" title={text}>
      {text}
    </Text>
  );
}
