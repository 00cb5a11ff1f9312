import '@mantine/core/styles/Checkbox.css';
import { Checkbox } from '@mantine/core';
import type { WidgetProps } from './types';

/** A boolean that is a choice about one action rather than a setting (stop the started desktops). */
export function CheckboxWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  disabled,
}: WidgetProps) {
  return (
    <Checkbox
      id={id}
      label={label}
      description={description}
      checked={value === true}
      onChange={(event) => onChange(event.currentTarget.checked)}
      onBlur={onBlur}
      error={error}
      disabled={disabled}
    />
  );
}
