import '@mantine/core/styles/Badge.css';
import { Badge } from '@mantine/core';
import { Icon } from '@/components/icon';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** A visibility flag (a deployment's): an eye and the word, so it is not told by colour alone. */
export function VisibilityCell({ value }: CellProps) {
  const { t } = useCellText();
  if (typeof value !== 'boolean') return empty;
  return (
    <Badge
      variant="light"
      color={value ? 'green' : 'gray'}
      leftSection={<Icon name={value ? 'eye' : 'eye-off'} size={12} />}
      data-testid="record-visibility"
      data-value={String(value)}
    >
      {t(value ? 'common:visibility.visible' : 'common:visibility.invisible')}
    </Badge>
  );
}
