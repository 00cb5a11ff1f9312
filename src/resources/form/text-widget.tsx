import { TextInput } from '@mantine/core';
import type { WidgetProps } from './types';

/** The input type of the text-like widgets. */
const INPUT_TYPES: Readonly<Record<string, 'url' | 'email'>> = { url: 'url', email: 'email' };

/**
 * Single-line text; empty text is handed back as undefined (pruned before validation). The `url`
 * and `email` widgets are the same field typed as a URL or an address (the schema's pattern or
 * format still decides what is valid).
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
      autoComplete={meta.widget === 'email' ? 'email' : 'off'}
      type={INPUT_TYPES[meta.widget] ?? 'text'}
      inputMode={INPUT_TYPES[meta.widget]}
    />
  );
}
