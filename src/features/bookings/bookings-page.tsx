/**
 * The bookings screens. `/booking/:type/:id` (the item view) is the calendar of one desktop or
 * deployment: the plan's availability shaded behind the caller's bookings, week (Monday to
 * Sunday) or month, a booking made by selecting a slot (or with New booking) and opened by
 * clicking it. `/booking/summary` lists the caller's bookings of every item (the summary view),
 * also by week or month. Times are shown in local time and sent in UTC; the lists are kept live
 * by the booking socket events, and a change of plan reloads the availability.
 */
import '@mantine/core/styles/Skeleton.css';
import { useCallback, useMemo, useState } from 'react';
import { Alert, Anchor, Button, Group, Skeleton, Stack, Text, Title } from '@mantine/core';
import { IconPlus } from '@tabler/icons-react';
import { useSubscription } from '@refinedev/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import type { Booking, BookingItemType, BookingEventType } from '@/generated/types';
import { constants } from '@/generated/constants';
import { visibleRange, type CalendarView } from '@/components/calendar/calendar-localizer';
import {
  LegendSwatch,
  PortalCalendar,
  type CalendarEvent,
  type CalendarEventKind,
} from '@/components/calendar/portal-calendar';
import { formatDate, formatDay, parseWireDate } from '@/lib/dates';
import { translateError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import { resourceKeyPrefix } from '@/providers/live-provider';
import { routePath } from '@/resources/actions/available-actions';
import { bookingItemHref } from './booking-href';
import { bookingCalendar, dayShades, type BookingEventTexts } from './booking-events';
import { BookingModal, canCreateBooking, type BookingModalState } from './booking-modal';
import { STEP_MINUTES, earliestStart, firstFreeSpan, proposedSpan } from './booking-rules';
import { bookingQueries } from './queries';

const ITEM_TYPES: readonly BookingItemType[] = ['desktop', 'deployment'];

function isItemType(value: string): value is BookingItemType {
  return (ITEM_TYPES as readonly string[]).includes(value);
}
const ITEM_VIEWS: readonly CalendarView[] = ['week', 'month'];
const SUMMARY_VIEWS: readonly CalendarView[] = ['agenda', 'week', 'month'];
/** What the legend explains: bookings and the schema's shown item types. */
const LEGEND: readonly CalendarEventKind[] = ['event', ...constants.bookings.shownItemTypes.value];

const noneUpcoming = (): number => 0;

function useEventTexts(): BookingEventTexts {
  const { t } = useTranslation();
  return useMemo(
    () => ({
      untitled: t('common:bookings.untitled'),
      window: (type: BookingEventType, units: number | undefined) => {
        const kind = t(`resources:bookings.enum.event_type.${type}`);
        return typeof units === 'number'
          ? t('common:bookings.windowUnits', { kind, count: units })
          : kind;
      },
      label: (title: string, start: Date, end: Date) =>
        t('common:bookings.eventLabel', {
          title,
          start: formatDate(start.toISOString()),
          end: formatDate(end.toISOString()),
        }),
    }),
    [t],
  );
}

function Legend() {
  const { t } = useTranslation();
  return (
    <Group gap="md" data-testid="booking-legend">
      {LEGEND.map((kind) => (
        <Group key={kind} gap={6} wrap="nowrap">
          <LegendSwatch kind={kind} />
          <Text size="xs">{t(`resources:bookings.enum.event_type.${kind}`)}</Text>
        </Group>
      ))}
    </Group>
  );
}

function CalendarSkeleton() {
  return <Skeleton height={560} radius="md" aria-busy data-testid="calendar-skeleton" />;
}

function useCalendarState(initial: CalendarView) {
  const [view, setView] = useState<CalendarView>(initial);
  const [date, setDate] = useState(() => new Date());
  const range = useMemo(() => visibleRange(view, date), [view, date]);
  return { view, setView, date, setDate, range };
}

/** The calendar of one item. */
function ItemBookings({ type, id }: { type: BookingItemType; id: string }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const role = useSessionState().user?.role_id ?? null;
  const texts = useEventTexts();
  const { view, setView, date, setDate, range } = useCalendarState('week');
  const [modal, setModal] = useState<BookingModalState | null>(null);
  const list = useQuery(bookingQueries.item(type, id, range));
  const priority = useQuery(bookingQueries.priority(type, id));
  const canCreate = canCreateBooking(role);

  // A plan added, changed or removed moves the availability: read the item again.
  const onPlanEvent = useCallback(
    () => void queryClient.invalidateQueries({ queryKey: resourceKeyPrefix('bookings') }),
    [queryClient],
  );
  useSubscription({ channel: 'resources/planning', types: ['*'], onLiveEvent: onPlanEvent });

  const calendar = useMemo(
    () => bookingCalendar(list.data?.data ?? [], texts, id),
    [list.data, texts, id],
  );
  const shades = useMemo(
    () => dayShades(calendar.background, range.start, range.end),
    [calendar.background, range],
  );
  const dayShade = useCallback((day: Date) => shades.get(formatDay(day)) ?? null, [shades]);
  const upcoming = useCallback(
    (now: number) => calendar.events.filter((event) => event.start.valueOf() > now).length,
    [calendar.events],
  );
  // The caller's latest booking end for the item (null: no limit). Not the start-now limit of
  // `bookings.maxBookingDate`, which only a booking from now has.
  const maxEnd = parseWireDate(priority.data?.max_booking_date ?? null);

  const create = (start: Date, end: Date): void => setModal({ mode: 'create', start, end });
  // A new booking proposes the first free step after the advance notice.
  const newBooking = (): void => {
    const span = firstFreeSpan(earliestStart(Date.now(), priority.data), calendar.others);
    create(span.start, span.end);
  };
  const onSelectEvent = (event: CalendarEvent<Booking>): void => {
    if (event.kind === 'event') {
      setModal({ mode: 'view', booking: event.record });
      return;
    }
    // Clicking a window that can be booked proposes its first free step.
    if (!canCreate || (event.kind !== 'available' && event.kind !== 'overridable')) return;
    const earliest = earliestStart(Date.now(), priority.data);
    const span = firstFreeSpan(event.start < earliest ? earliest : event.start, calendar.others);
    create(span.start, span.end < event.end ? span.end : event.end);
  };

  const name = priority.data?.name ?? id;
  const summaryHref = routePath('bookings', 'list');
  const empty = !list.isLoading && calendar.events.length === 0 && calendar.background.length === 0;
  return (
    <Stack gap="md" data-testid="bookings-item">
      <Group justify="space-between" align="flex-end" wrap="wrap">
        <Stack gap={2}>
          <Title order={1} size="h3">
            {t('common:bookings.itemTitle', { name })}
          </Title>
          <Text size="sm" c="dimmed">
            {t(`resources:bookings.enum.item_type.${type}`)}
          </Text>
        </Stack>
        {summaryHref && (
          <Anchor component={Link} to={summaryHref} size="sm" data-testid="bookings-summary-link">
            {t('common:bookings.toSummary')}
          </Anchor>
        )}
      </Group>
      <Legend />
      {list.error ? (
        <Alert color="red" role="alert" data-testid="bookings-error">
          {translateError(list.error as never)}
        </Alert>
      ) : null}
      {empty && !list.error && (
        <Text size="sm" c="dimmed" data-testid="bookings-empty">
          {t('common:bookings.emptyItem')}
        </Text>
      )}
      {list.isLoading && !list.data ? (
        <CalendarSkeleton />
      ) : (
        <PortalCalendar<Booking>
          label={t('common:bookings.calendarLabel', { name })}
          events={calendar.events}
          backgroundEvents={calendar.background}
          view={view}
          views={ITEM_VIEWS}
          onView={setView}
          date={date}
          onNavigate={setDate}
          step={STEP_MINUTES}
          selectable={canCreate}
          onSelectSlot={(selection) => {
            const span = proposedSpan(selection, Date.now(), priority.data);
            create(span.start, span.end);
          }}
          onSelectEvent={onSelectEvent}
          dayShade={dayShade}
          busy={list.isFetching}
          toolbarExtra={
            canCreate ? (
              <Button
                size="xs"
                leftSection={<IconPlus size={14} />}
                onClick={newBooking}
                data-testid="booking-new"
              >
                {t('common:bookings.new')}
              </Button>
            ) : null
          }
        />
      )}
      {modal && (
        <BookingModal
          state={modal}
          item={{ type, id }}
          priority={priority.data}
          others={calendar.others}
          upcoming={upcoming}
          maxEnd={maxEnd}
          onClose={() => setModal(null)}
          onEdit={(booking) => setModal({ mode: 'edit', booking })}
        />
      )}
    </Stack>
  );
}

/** The caller's bookings of every item. */
function SummaryBookings() {
  const { t } = useTranslation();
  const texts = useEventTexts();
  const { view, setView, date, setDate, range } = useCalendarState('agenda');
  const [modal, setModal] = useState<BookingModalState | null>(null);
  const list = useQuery(bookingQueries.mine(range));
  const calendar = useMemo(() => bookingCalendar(list.data?.data ?? [], texts), [list.data, texts]);
  const edited = modal && modal.mode !== 'create' ? modal.booking : null;
  const others = useMemo(
    () =>
      edited
        ? calendar.others.filter((other) =>
            calendar.events.some(
              (event) => event.record.id === other.id && event.record.item_id === edited.item_id,
            ),
          )
        : [],
    [calendar, edited],
  );
  return (
    <Stack gap="md" data-testid="bookings-summary">
      <Title order={1} size="h3">
        {t('common:bookings.summaryTitle')}
      </Title>
      {list.error ? (
        <Alert color="red" role="alert" data-testid="bookings-error">
          {translateError(list.error as never)}
        </Alert>
      ) : null}
      {!list.isLoading && !list.error && calendar.events.length === 0 && (
        <Text size="sm" c="dimmed" data-testid="bookings-empty">
          {t('resources:bookings.empty')}
        </Text>
      )}
      {list.isLoading && !list.data ? (
        <CalendarSkeleton />
      ) : (
        <PortalCalendar<Booking>
          label={t('common:bookings.summaryTitle')}
          events={calendar.events}
          view={view}
          views={SUMMARY_VIEWS}
          onView={setView}
          date={date}
          onNavigate={setDate}
          step={STEP_MINUTES}
          onSelectEvent={(event) => setModal({ mode: 'view', booking: event.record })}
          busy={list.isFetching}
        />
      )}
      {modal && (
        <BookingModal
          state={modal}
          item={null}
          priority={null}
          others={others}
          upcoming={noneUpcoming}
          maxEnd={null}
          itemHref={bookingItemHref}
          onClose={() => setModal(null)}
          onEdit={(booking) => setModal({ mode: 'edit', booking })}
        />
      )}
    </Stack>
  );
}

export interface BookingsPageProps {
  resource: string;
  kind: string;
}

export function BookingsPage({ kind }: BookingsPageProps) {
  const { t } = useTranslation();
  const { type = '', id = '' } = useParams<{ type: string; id: string }>();
  if (kind !== 'show') return <SummaryBookings />;
  if (!isItemType(type) || !id)
    return (
      <Alert color="yellow" data-testid="bookings-unknown-item">
        {t('common:bookings.unknownItem')}
      </Alert>
    );
  return <ItemBookings key={`${type}:${id}`} type={type} id={id} />;
}
