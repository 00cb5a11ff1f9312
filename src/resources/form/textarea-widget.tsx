import { Textarea } from '@mantine/core';
import type { WidgetProps } from './types';

/** Multi-line text (x-ui.widget `textarea`). */
export function TextareaWidget({
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
    <Textarea
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
      autosize
      minRows={2}
    />
  );
}
