/**
 * The start-now modal of a desktop that needs a booking: the profile (those available now; the
 * desktop's own first), the end (30-minute steps up to the profile's maximum booking date), then
 * "Book and start" books from now until that end and starts the desktop. Without enough time
 * available it says so and leads to the bookings calendar.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import '@mantine/core/styles/Skeleton.css';
import { useMemo, useState, type FormEvent } from 'react';
import { Alert, Button, Group, Modal, Select, Skeleton, Stack, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { Desktop } from '@/generated/types';
import { formatDate, parseWireDate } from '@/lib/dates';
import { translateError } from '@/lib/error-display';
import { isApiError } from '@/providers/http-client';
import {
  bookAndStart,
  currentProfile,
  desktopBookingHref,
  endChoices,
  GPU_PLAN_CODES,
  openBookingPrompt,
} from './booking-start';
import { bookingStartQueries } from './booking-start-queries';

export interface StartNowModalProps {
  desktop: Desktop;
  /** Whether the bookings calendar can be opened (its operations are built). */
  calendar: boolean;
  onClose: () => void;
}

export function StartNowModal({ desktop, calendar, onClose }: StartNowModalProps) {
  const { t } = useTranslation();
  const available = useQuery(bookingStartQueries.reservablesAvailable());
  const maxDate = useQuery(bookingStartQueries.maxBookingDate(desktop.id));
  const own = currentProfile(desktop);
  const profiles = useMemo(() => available.data?.reservables_available ?? [], [available.data]);
  const [chosenProfile, setChosenProfile] = useState<string | null>(null);
  const profile =
    chosenProfile ??
    (profiles.some((item) => item.id === own) ? own : (profiles[0]?.id ?? own ?? null));
  const max = useMemo(() => {
    const listed = profiles.find((item) => item.id === profile)?.max_booking_date;
    if (listed) return parseWireDate(listed);
    return profile === own ? parseWireDate(maxDate.data?.max_booking_date ?? null) : null;
  }, [profiles, profile, own, maxDate.data]);
  const [now] = useState(() => Date.now());
  const choices = useMemo(() => endChoices(now, max), [now, max]);
  const [chosenEnd, setChosenEnd] = useState<string | null>(null);
  const end =
    chosenEnd && choices.some((choice) => String(choice.valueOf()) === chosenEnd)
      ? chosenEnd
      : choices[0]
        ? String(choices[0].valueOf())
        : null;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const loading = available.isLoading || maxDate.isLoading;
  const href = calendar ? desktopBookingHref(desktop.id) : null;

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    if (!end) return;
    setBusy(true);
    setError(null);
    try {
      const until = new Date(Number(end));
      await bookAndStart(desktop, profile, until);
      notifications.show({
        color: 'green',
        message: t('common:bookingStart.started', {
          name: desktop.name,
          end: formatDate(until.toISOString()),
        }),
      });
      onClose();
    } catch (cause) {
      // The GPU plan does not allow the profile now: the cannot-start-now choices take over.
      const code = isApiError(cause) ? (cause.description_code ?? null) : null;
      if (code && GPU_PLAN_CODES.includes(code))
        openBookingPrompt({ desktopId: desktop.id, kind: 'cannotStartNow', code });
      else setError(cause);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      opened
      onClose={onClose}
      title={t('common:bookingStart.startNowTitle', { name: desktop.name })}
      closeButtonProps={{ 'aria-label': t('common:actions.close') }}
      data-testid="start-now-modal"
    >
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Stack gap="sm">
          <Text size="sm">{t('common:bookingStart.startNowIntro')}</Text>
          {loading ? (
            <Skeleton height={96} aria-busy />
          ) : (
            <>
              <Select
                label={t('resources:bookings.fields.profile')}
                data={profiles.map((item) => ({ value: item.id, label: item.name }))}
                value={profile}
                onChange={(value) => {
                  setChosenProfile(value);
                  setChosenEnd(null);
                }}
                allowDeselect={false}
                disabled={profiles.length === 0}
                comboboxProps={{ withinPortal: true }}
                data-testid="start-now-profile"
              />
              <Select
                label={t('common:bookingStart.until')}
                data={choices.map((choice) => ({
                  value: String(choice.valueOf()),
                  label: formatDate(choice.toISOString()),
                }))}
                value={end}
                onChange={setChosenEnd}
                allowDeselect={false}
                disabled={choices.length === 0}
                comboboxProps={{ withinPortal: true }}
                data-testid="start-now-end"
              />
              {choices.length === 0 && (
                <Alert color="yellow" data-testid="start-now-unavailable">
                  {t('common:bookingStart.notEnoughTime')}
                </Alert>
              )}
            </>
          )}
          {error !== null && (
            <Alert color="red" role="alert" data-testid="start-now-error">
              {translateError(error as never)}
            </Alert>
          )}
          <Group justify="space-between" gap="xs">
            {href ? (
              <Button component={Link} to={href} variant="subtle" onClick={onClose}>
                {t('common:bookingStart.toBookings')}
              </Button>
            ) : (
              <span />
            )}
            <Group gap="xs">
              <Button variant="default" onClick={onClose} disabled={busy}>
                {t('common:actions.cancel')}
              </Button>
              <Button
                type="submit"
                color="green"
                loading={busy}
                disabled={!end || loading}
                data-testid="start-now-submit"
              >
                {t('common:bookingStart.bookAndStart')}
              </Button>
            </Group>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
