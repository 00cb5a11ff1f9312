/**
 * The end of a booking from now: every 30-minute step up to the profile's maximum booking date
 * (and the start-now cap), or a notice when less than the minimum is left. Shared by the
 * start-now and cannot-start-now modals.
 */
import { useMemo, useState } from 'react';
import { Alert, Select } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { formatDate } from '@/lib/dates';
import { endChoices } from './booking-start';

/** The end choices from now up to `max`, and the one chosen (the first by default). */
export function useBookingEnd(max: Date | null) {
  const [now] = useState(() => Date.now());
  const choices = useMemo(() => endChoices(now, max), [now, max]);
  const [chosen, setChosen] = useState<string | null>(null);
  const end =
    chosen && choices.some((choice) => String(choice.valueOf()) === chosen)
      ? chosen
      : choices[0]
        ? String(choices[0].valueOf())
        : null;
  return { choices, end: end ? new Date(Number(end)) : null, value: end, setChosen };
}

export interface BookingEndSelectProps {
  state: ReturnType<typeof useBookingEnd>;
  testId: string;
}

export function BookingEndSelect({ state, testId }: BookingEndSelectProps) {
  const { t } = useTranslation();
  return (
    <>
      <Select
        label={t('common:bookingStart.until')}
        data={state.choices.map((choice) => ({
          value: String(choice.valueOf()),
          label: formatDate(choice.toISOString()),
        }))}
        value={state.value}
        onChange={state.setChosen}
        allowDeselect={false}
        disabled={state.choices.length === 0}
        comboboxProps={{ withinPortal: true }}
        data-testid={testId}
      />
      {state.choices.length === 0 && (
        <Alert color="yellow" data-testid={`${testId}-unavailable`}>
          {t('common:bookingStart.notEnoughTime')}
        </Alert>
      )}
    </>
  );
}
