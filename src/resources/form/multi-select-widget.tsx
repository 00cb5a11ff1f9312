import '@mantine/core/styles/Combobox.css';
import '@mantine/core/styles/Pill.css';
import '@mantine/core/styles/PillsInput.css';
import { MultiSelect } from '@mantine/core';
import type { WidgetProps } from './types';

/** Several choices from `options` (or the enum); the value is a list of option values. */
export function MultiSelectWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  required,
  disabled,
  options,
}: WidgetProps) {
  const data = (options ?? []).map((option) => ({
    value: option.value,
    label: option.label,
    disabled: !!option.disabled,
  }));
  return (
    <MultiSelect
      id={id}
      label={label}
      description={description}
      data={data}
      value={
        Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []
      }
      onChange={onChange}
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
