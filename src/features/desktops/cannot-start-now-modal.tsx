/**
 * The cannot-start-now modal, opened when a start is refused for the GPU plan: it says why, and
 * offers to change the desktop's profile to one available now and start it, or to book it for
 * later in the bookings calendar.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import '@mantine/core/styles/Skeleton.css';
import { useState, type FormEvent } from 'react';
import { Alert, Button, Group, Modal, Select, Skeleton, Stack, Text } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { Desktop } from '@/generated/types';
import { translateError } from '@/lib/error-display';
import { changeProfileAndStart, currentProfile, desktopBookingHref } from './booking-start';
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
  const profiles = (available.data?.reservables_available ?? []).filter((item) => item.id !== own);
  const [chosen, setChosen] = useState<string | null>(null);
  const profile = chosen ?? profiles[0]?.id ?? null;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const href = calendar ? desktopBookingHref(desktop.id) : null;

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    if (!profile) return;
    setBusy(true);
    setError(null);
    try {
      await changeProfileAndStart(desktop.id, profile);
      notifications.show({
        color: 'green',
        message: t('common:bookingStart.profileChanged', { name: desktop.name }),
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
            <Select
              label={t('common:bookingStart.otherProfile')}
              data={profiles.map((item) => ({ value: item.id, label: item.name }))}
              value={profile}
              onChange={setChosen}
              allowDeselect={false}
              comboboxProps={{ withinPortal: true }}
              data-testid="cannot-start-profile"
            />
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
              disabled={!profile}
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
