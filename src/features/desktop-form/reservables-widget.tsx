import '@mantine/core/styles/Combobox.css';
import { Select } from '@mantine/core';
import type { WidgetProps } from '@/resources/form/types';

/** The "None" bookable profile: stored as `vgpus: null`. */
export const NO_PROFILE = 'None';

/** Bookable profile (`hardware.reservables`): one vGPU profile or None (the default). */
export function ReservablesWidget({
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
  const vgpus = (value as { vgpus?: string[] | null } | undefined)?.vgpus;
  const current = vgpus?.[0] ?? NO_PROFILE;
  const data = (options ?? []).map((option) => ({ value: option.value, label: option.label }));
  if (!data.some((option) => option.value === current))
    data.push({ value: current, label: current });
  return (
    <Select
      id={id}
      label={label}
      description={description}
      data={data}
      value={current}
      onChange={(next) => onChange({ vgpus: !next || next === NO_PROFILE ? null : [next] })}
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      allowDeselect={false}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
