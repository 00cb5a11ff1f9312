import { TextInput } from '@mantine/core';
import type { WidgetProps } from './types';

/**
 * Single-line text; empty text is handed back as undefined (pruned before validation). The `url`
 * widget is the same field typed as a URL (the schema's pattern still decides what is valid).
 */
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
      type={meta.widget === 'url' ? 'url' : 'text'}
      inputMode={meta.widget === 'url' ? 'url' : undefined}
    />
  );
}
