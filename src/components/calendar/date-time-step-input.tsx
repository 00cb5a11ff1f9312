/**
 * A local date and time picked in steps of the field's minutes: a day picker and a time select
 * (00:00, 00:30... for a 30-minute step), both labelled, with one error line under them.
 */
import '@mantine/dates/styles.css';
import { useId, useMemo, type ReactNode } from 'react';
import { Group, Input, Select } from '@mantine/core';
import { DatePickerInput } from '@mantine/dates';
import { useTranslation } from 'react-i18next';
import { formatDay, formatTime } from '@/lib/dates';
import { useDatePickerLocale } from '@/lib/date-picker-locale';

export interface DateTimeStepInputProps {
  label: string;
  value: Date | null;
  onChange: (value: Date | null) => void;
  /** Minutes between the time choices. */
  step: number;
  error?: ReactNode;
  minDate?: Date | undefined;
  maxDate?: Date | undefined;
  disabled?: boolean;
  required?: boolean;
  testId: string;
}

/** Every time of day on a `step`-minute grid, as HH:mm. */
export function timesOfDay(step: number): string[] {
  const times: string[] = [];
  for (let minute = 0; minute < 24 * 60; minute += Math.max(1, step)) {
    const date = new Date(2000, 0, 1, 0, minute);
    times.push(formatTime(date));
  }
  return times;
}

function combine(day: string, time: string): Date | null {
  const [year, month, date] = day.split('-').map(Number);
  const [hours, minutes] = time.split(':').map(Number);
  if (!year || !month || !date || hours === undefined || minutes === undefined) return null;
  return new Date(year, month - 1, date, hours, minutes);
}

export function DateTimeStepInput({
  label,
  value,
  onChange,
  step,
  error,
  minDate,
  maxDate,
  disabled = false,
  required = false,
  testId,
}: DateTimeStepInputProps) {
  const { t } = useTranslation();
  const locale = useDatePickerLocale();
  const errorId = useId();
  const times = useMemo(() => timesOfDay(step), [step]);
  const day = value ? formatDay(value) : null;
  const time = value ? formatTime(value) : null;
  // A value off the grid (an event made elsewhere) is still shown as it is.
  const data = time && !times.includes(time) ? [...times, time].sort() : times;
  const described = error ? { 'aria-describedby': errorId } : {};
  return (
    <div>
      <Group gap="xs" align="flex-end" wrap="nowrap">
        <DatePickerInput
          label={label}
          value={day}
          onChange={(next) => onChange(next ? combine(next, time ?? times[0] ?? '00:00') : null)}
          valueFormat="YYYY-MM-DD"
          locale={locale}
          {...(minDate ? { minDate: formatDay(minDate) } : {})}
          {...(maxDate ? { maxDate: formatDay(maxDate) } : {})}
          error={!!error}
          disabled={disabled}
          required={required}
          popoverProps={{ withinPortal: true }}
          style={{ flex: 1 }}
          data-testid={`${testId}-day`}
          {...described}
        />
        <Select
          aria-label={t('common:calendar.timeOf', { field: label })}
          data={data}
          value={time}
          onChange={(next) => {
            if (next && day) onChange(combine(day, next));
          }}
          searchable
          allowDeselect={false}
          error={!!error}
          disabled={disabled || !day}
          comboboxProps={{ withinPortal: true }}
          w={110}
          data-testid={`${testId}-time`}
          {...described}
        />
      </Group>
      {error ? (
        <Input.Error id={errorId} mt={4} data-testid={`${testId}-error`}>
          {error}
        </Input.Error>
      ) : null}
    </div>
  );
}
