/**
 * The booking parts of a desktop card: the Start now button of a desktop that needs a booking
 * and has none in force (it stands in for Start and Open), with a link to its calendar, and the
 * host of its start-now or cannot-start-now modal (each modal loads when first opened).
 */
import { lazy, Suspense } from 'react';
import { Button, Group } from '@mantine/core';
import { IconCalendar, IconPlayerPlay } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { Desktop, Role } from '@/generated/types';
import { useSessionRole } from '@/lib/session-state';
import { usableOperation } from '@/resources/actions/available-actions';
import {
  closeBookingPrompt,
  desktopBookingHref,
  followStartRefusals,
  openBookingPrompt,
  useBookingPrompt,
} from './booking-start';

const StartNowModal = lazy(() =>
  import('./start-now-modal').then((m) => ({ default: m.StartNowModal })),
);
const CannotStartNowModal = lazy(() =>
  import('./cannot-start-now-modal').then((m) => ({ default: m.CannotStartNowModal })),
);

// Refused starts open their modal whichever screen asked (the card's Start, its Open).
followStartRefusals();

/** Whether the role can book now (the booking and start-now operations are built). */
export function canBookNow(role: Role | null): boolean {
  return (
    usableOperation('bookings', 'create', role) !== null &&
    usableOperation('bookings', 'reservablesAvailable', role) !== null
  );
}

/** Whether the role can open the bookings calendar of an item. */
function canOpenCalendar(role: Role | null): boolean {
  return usableOperation('bookings', 'listItem', role) !== null;
}

/** Start now (and the calendar) for a desktop that needs a booking to start. */
export function StartNowActions({ desktop }: { desktop: Desktop }) {
  const { t } = useTranslation();
  const role = useSessionRole();
  const href = canOpenCalendar(role) ? desktopBookingHref(desktop.id) : null;
  return (
    <Group gap={6} wrap="wrap" data-testid="desktop-booking-actions">
      {canBookNow(role) && (
        <Button
          size="sm"
          color="green"
          leftSection={<IconPlayerPlay size={16} />}
          onClick={() => openBookingPrompt({ desktopId: desktop.id, kind: 'startNow', code: null })}
          data-action="startNow"
        >
          {t('common:bookingStart.startNow')}
        </Button>
      )}
      {href && (
        <Button
          component={Link}
          to={href}
          size="sm"
          variant="default"
          leftSection={<IconCalendar size={16} />}
          data-action="book"
        >
          {t('common:bookingStart.book')}
        </Button>
      )}
    </Group>
  );
}

/** The desktop's start-now or cannot-start-now modal, while one is asked for. */
export function BookingStartHost({ desktop }: { desktop: Desktop }) {
  const prompt = useBookingPrompt(desktop.id);
  const role = useSessionRole();
  if (!prompt) return null;
  const calendar = canOpenCalendar(role);
  return (
    <Suspense fallback={null}>
      {prompt.kind === 'startNow' ? (
        <StartNowModal desktop={desktop} calendar={calendar} onClose={closeBookingPrompt} />
      ) : (
        <CannotStartNowModal
          desktop={desktop}
          code={prompt.code}
          calendar={calendar}
          onClose={closeBookingPrompt}
        />
      )}
    </Suspense>
  );
}
