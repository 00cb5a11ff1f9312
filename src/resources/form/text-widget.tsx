import { TextInput } from '@mantine/core';
import type { WidgetProps } from './types';

/** Single-line text; empty text is handed back as undefined (pruned before validation). */
export function TextWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  required,
  disabled,
  meta,
}: WidgetProps) {
  return (
    <TextInput
      id={id}
      label={label}
      description={description}
      value={typeof value === 'string' ? value : ''}
      onChange={(event) =>
        onChange(event.currentTarget.value === '' ? undefined : event.currentTarget.value)
      }
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      maxLength={meta.maxLength}
      autoComplete="off"
    />
  );
}
