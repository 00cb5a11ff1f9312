/**
 * The `expiryDate` input widget: the field holds minutes from now (an API key's
 * `expiration_minutes`); the user picks the day it stops working, and the key lasts until the
 * end of that day, within the field's minimum and maximum.
 */
import '@mantine/dates/styles.css';
import { DatePickerInput } from '@mantine/dates';
import dayjs from 'dayjs';
import { useDatePickerLocale } from '@/lib/date-picker-locale';
import type { WidgetProps } from '@/resources/form/types';

const DAY = 'YYYY-MM-DD';

/** Minutes from `now` until the end of `day` (YYYY-MM-DD), kept within [min, max]. */
export function minutesUntil(day: string, now: Date, min = 1, max = Infinity): number {
  const minutes = Math.floor(dayjs(day).endOf('day').diff(dayjs(now), 'minute', true));
  return Math.min(max, Math.max(min, minutes));
}

/** The day (YYYY-MM-DD) that is `minutes` after `now`. */
export function dayAfter(minutes: number, now: Date): string {
  return dayjs(now).add(minutes, 'minute').format(DAY);
}

export function ExpiryDateWidget({
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
  const locale = useDatePickerLocale();
  const now = new Date();
  const min = meta.minimum ?? 1;
  const max = meta.maximum ?? Infinity;
  return (
    <DatePickerInput
      id={id}
      label={label}
      description={description}
      value={typeof value === 'number' ? dayAfter(value, now) : null}
      onChange={(day) => onChange(day ? minutesUntil(day, new Date(), min, max) : undefined)}
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      minDate={dayAfter(min, now)}
      {...(Number.isFinite(max) ? { maxDate: dayAfter(max, now) } : {})}
      valueFormat={DAY}
      locale={locale}
      popoverProps={{ withinPortal: true }}
      data-testid="expiry-date"
    />
  );
}
