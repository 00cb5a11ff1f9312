import { CopyCell } from './copy-cell';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';

/** A list of codes shown once (recovery codes): one per line, monospaced, copied together. */
export function CodeListCell(props: CellProps) {
  const { value } = props;
  if (!Array.isArray(value) || value.length === 0) return empty;
  return <CopyCell {...props} value={value.map(String).join('\n')} />;
}
