/**
 * The cannot-start-now modal, opened when a start is refused for the GPU plan: it says why, and
 * offers to change the desktop's profile to one available now, book it from now until a chosen
 * end and start it, or to book it for later in the bookings calendar.
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
import { bookAndStart, currentProfile, desktopBookingHref } from './booking-start';
import { BookingEndSelect, useBookingEnd } from './booking-end-select';
import { bookingStartQueries } from './booking-start-queries';

export interface CannotStartNowModalProps {
  desktop: Desktop;
  /** The refusal's code. */
  code: string | null;
  /** Whether the bookings calendar can be opened (its operations are built). */
  calendar: boolean;
  onClose: () => void;
}

export function CannotStartNowModal({
  desktop,
  code,
  calendar,
  onClose,
}: CannotStartNowModalProps) {
  const { t } = useTranslation();
  const available = useQuery(bookingStartQueries.reservablesAvailable());
  const own = currentProfile(desktop);
  // Another profile than the one refused.
  const profiles = useMemo(
    () => (available.data?.reservables_available ?? []).filter((item) => item.id !== own),
    [available.data, own],
  );
  const [chosen, setChosen] = useState<string | null>(null);
  const profile = chosen ?? profiles[0]?.id ?? null;
  const max = useMemo(
    () => parseWireDate(profiles.find((item) => item.id === profile)?.max_booking_date ?? null),
    [profiles, profile],
  );
  const endState = useBookingEnd(max);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const href = calendar ? desktopBookingHref(desktop.id) : null;

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    const end = endState.end;
    if (!profile || !end) return;
    setBusy(true);
    setError(null);
    try {
      await bookAndStart(desktop, profile, end);
      notifications.show({
        color: 'green',
        message: t('common:bookingStart.started', {
          name: desktop.name,
          end: formatDate(end.toISOString()),
        }),
      });
      onClose();
    } catch (cause) {
      setError(cause);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      opened
      onClose={onClose}
      title={t('common:bookingStart.cannotTitle', { name: desktop.name })}
      closeButtonProps={{ 'aria-label': t('common:actions.close') }}
      data-testid="cannot-start-now-modal"
    >
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Stack gap="sm">
          {code && (
            <Alert color="yellow" data-testid="cannot-start-reason">
              {translateError({ description_code: code })}
            </Alert>
          )}
          <Text size="sm">{t('common:bookingStart.cannotIntro')}</Text>
          {available.isLoading ? (
            <Skeleton height={56} aria-busy />
          ) : profiles.length > 0 ? (
            <>
              <Select
                label={t('common:bookingStart.otherProfile')}
                data={profiles.map((item) => ({ value: item.id, label: item.name }))}
                value={profile}
                onChange={(value) => {
                  setChosen(value);
                  endState.setChosen(null);
                }}
                allowDeselect={false}
                comboboxProps={{ withinPortal: true }}
                data-testid="cannot-start-profile"
              />
              <BookingEndSelect state={endState} testId="cannot-start-end" />
            </>
          ) : (
            <Text size="sm" c="dimmed" data-testid="cannot-start-none">
              {t('common:bookingStart.noOtherProfile')}
            </Text>
          )}
          {error !== null && (
            <Alert color="red" role="alert" data-testid="cannot-start-error">
              {translateError(error as never)}
            </Alert>
          )}
          <Group justify="space-between" gap="xs">
            {href ? (
              <Button
                component={Link}
                to={href}
                variant="default"
                onClick={onClose}
                data-testid="cannot-start-bookings"
              >
                {t('common:bookingStart.toBookings')}
              </Button>
            ) : (
              <span />
            )}
            <Button
              type="submit"
              color="green"
              loading={busy}
              disabled={!profile || !endState.end}
              data-testid="cannot-start-submit"
            >
              {t('common:bookingStart.changeAndStart')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
