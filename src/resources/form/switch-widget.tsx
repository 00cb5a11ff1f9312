import '@mantine/core/styles/Switch.css';
import { Switch } from '@mantine/core';
import type { WidgetProps } from './types';

/** Boolean on/off. */
export function SwitchWidget({
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
    <Switch
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
