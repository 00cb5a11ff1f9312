import '@mantine/core/styles/Combobox.css';
import { Select } from '@mantine/core';
import type { WidgetProps } from './types';

/**
 * One choice from `options` (or the field's enum). An array-typed field (e.g. `boot_order`) holds
 * the choice as a one-item list.
 */
export function SelectWidget({
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
  options,
}: WidgetProps) {
  const list = meta.type === 'array';
  const current = list ? (Array.isArray(value) ? value[0] : undefined) : value;
  const data = (options ?? []).map((option) => ({
    value: option.value,
    label: option.label,
    disabled: !!option.disabled,
  }));
  return (
    <Select
      id={id}
      label={label}
      description={description}
      data={data}
      value={typeof current === 'string' ? current : null}
      onChange={(next) => onChange(next === null ? undefined : list ? [next] : next)}
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      allowDeselect={!required && !list}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
