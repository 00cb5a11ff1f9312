/**
 * The start-now modal of a desktop that needs a booking: the profile (the desktop's own, or
 * another available now), the end (30-minute steps up to the profile's maximum booking date),
 * then "Book and start" books from now until that end and starts the desktop. Without enough time
 * available it says so and leads to the bookings calendar. When the GPU plan does not offer the
 * desktop's own profile now (or offers no profile at all), the cannot-start-now modal takes over.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import '@mantine/core/styles/Skeleton.css';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
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
  GPU_PLAN_CODES,
  openBookingPrompt,
} from './booking-start';
import { BookingEndSelect, useBookingEnd } from './booking-end-select';
import { bookingStartQueries } from './booking-start-queries';

/** The GPU-plan refusal code of a failed read, if it is one. */
function gpuPlanCode(error: unknown): string | null {
  const code = isApiError(error) ? (error.description_code ?? null) : null;
  return code && GPU_PLAN_CODES.includes(code) ? code : null;
}

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
  // The desktop's own profile unless the user picks another.
  const profile = chosenProfile ?? own ?? profiles[0]?.id ?? null;
  const max = useMemo(() => {
    const listed = profiles.find((item) => item.id === profile)?.max_booking_date;
    if (listed) return parseWireDate(listed);
    return profile === own ? parseWireDate(maxDate.data?.max_booking_date ?? null) : null;
  }, [profiles, profile, own, maxDate.data]);
  const endState = useBookingEnd(max);
  const end = endState.end;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const loading = available.isLoading || maxDate.isLoading;
  // The plan refuses the desktop's own profile now (or every profile): change it or book later.
  const refusal = gpuPlanCode(maxDate.error) ?? gpuPlanCode(available.error);
  useEffect(() => {
    if (refusal)
      openBookingPrompt({ desktopId: desktop.id, kind: 'cannotStartNow', code: refusal });
  }, [refusal, desktop.id]);
  const href = calendar ? desktopBookingHref(desktop.id) : null;

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    if (!end) return;
    setBusy(true);
    setError(null);
    try {
      const until = end;
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
      const code = gpuPlanCode(cause);
      if (code) openBookingPrompt({ desktopId: desktop.id, kind: 'cannotStartNow', code });
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
                  endState.setChosen(null);
                }}
                allowDeselect={false}
                disabled={profiles.length === 0}
                comboboxProps={{ withinPortal: true }}
                data-testid="start-now-profile"
              />
              <BookingEndSelect state={endState} testId="start-now-end" />
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
