import { Text } from '@mantine/core';

/** What a cell shows for a missing value: a dimmed dash, hidden from screen readers. */
export const empty = (
  <Text span c="dimmed" aria-hidden>
    —
  </Text>
);
