import { Text } from '@mantine/core';
import { formatGigabytes } from '@/lib/sizes';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function BytesCell({ value }: CellProps) {
  const { language } = useCellText();
  const text = formatGigabytes(value as number | null, language);
  if (!text) return empty;
  return (
    <Text span size="sm">
      {text}
    </Text>
  );
}
