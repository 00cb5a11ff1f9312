import { Text } from '@mantine/core';
import { useCellText } from './cell-text';
import { empty } from './empty-cell';
import type { CellProps } from './cell-types';
import type { TFunction } from 'i18next';
import { optionalText } from '@/i18n/optional-text';

/**
 * An operation key (`adminUsers.update`) in words: the resource's title and the operation's label
 * (its action's label, else the common name of create, update and delete, else the key itself).
 */
export function operationText(t: TFunction, key: string): string {
  const dot = key.indexOf('.');
  if (dot <= 0) return key;
  const resource = key.slice(0, dot);
  const operation = key.slice(dot + 1);
  const title = optionalText(t, `resources:${resource}.title`);
  const label = optionalText(t, [
    `resources:${resource}.stateActions.${operation}`,
    `common:operations.${operation}`,
  ]);
  return title && label ? `${title} · ${label}` : key;
}

export function OperationCell({ value }: CellProps) {
  const { t } = useCellText();
  if (typeof value !== 'string' || !value) return empty;
  const text = operationText(t, value);
  return (
    <Text span size="sm" truncate="end" title={value}>
      {text}
    </Text>
  );
}
