import '@mantine/core/styles/Badge.css';
import { Badge } from '@mantine/core';
import { Icon } from '@/components/icon';
import { machineOf, stateOf } from '@common/state-actions';
import { stateColor, stateIcon } from './state-style';
import { useEnumText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

export function StateCell({ resource, meta, value, record }: CellProps) {
  const text = useEnumText(resource, meta.path);
  if (value === undefined || value === null) return empty;
  // The state machine's own field reads through its value map (`active: true` -> `active`).
  const state =
    machineOf(resource)?.field === meta.path ? stateOf(resource, record) : String(value);
  return (
    <Badge
      color={stateColor(state)}
      variant="light"
      leftSection={<Icon name={stateIcon(state)} size={12} />}
      data-testid="record-state"
      data-value={state}
    >
      {text(state)}
    </Badge>
  );
}
