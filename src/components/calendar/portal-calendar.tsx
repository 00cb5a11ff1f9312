/**
 * The portal's calendar (bookings and planning): react-big-calendar with the shared localizer
 * (weeks from Monday, the interface language, 24-hour times), a Mantine toolbar (today, previous,
 * next, the range shown, the view switch), events as keyboard-reachable buttons in the month and
 * agenda views (the week view's events are buttons of their own), availability windows as
 * background events in the week view and as shaded days in the month view. Its stylesheet loads
 * with the screens that draw it.
 */
import 'react-big-calendar/lib/css/react-big-calendar.css';
import '@mantine/core/styles/SegmentedControl.css';
import {
  createContext,
  useCallback,
  useContext,
  useMemo,
  useRef,
  type KeyboardEvent,
  type SyntheticEvent,
  type ReactNode,
} from 'react';
import { ActionIcon, Box, Button, Group, SegmentedControl, Text } from '@mantine/core';
import { IconChevronLeft, IconChevronRight } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import {
  Calendar,
  type Components,
  type EventProps,
  type SlotInfo,
  type ToolbarProps,
  type View,
} from 'react-big-calendar';
import {
  AGENDA_DAYS,
  calendarFormats,
  calendarLocalizer,
  calendarMessages,
  type CalendarView,
} from './calendar-localizer';
import { useCalendarSemantics } from './calendar-semantics';
import classes from './portal-calendar.module.css';

export type CalendarEventKind =
  'event' | 'available' | 'overridable' | 'unavailable' | 'plan' | 'other';

export interface CalendarEvent<R = unknown> {
  /** Unique among the events drawn. */
  key: string;
  title: string;
  /** Accessible name: the title with its times. */
  label: string;
  start: Date;
  end: Date;
  kind: CalendarEventKind;
  /** The wire record behind the event. */
  record: R;
}

export type DayShade = 'available' | 'overridable' | 'unavailable';

const DAY_CLASSES: Readonly<Record<DayShade, string | undefined>> = {
  available: classes.dayAvailable,
  overridable: classes.dayOverridable,
  unavailable: classes.dayUnavailable,
};

/** A legend swatch in the colours of an event kind. */
export function LegendSwatch({ kind }: { kind: CalendarEventKind }) {
  return <span className={`${classes.legend ?? ''} ${classes[kind] ?? ''}`} aria-hidden />;
}

export interface PortalCalendarProps<R> {
  events: readonly CalendarEvent<R>[];
  /** Windows drawn behind the events in the week view. */
  backgroundEvents?: readonly CalendarEvent<R>[];
  view: CalendarView;
  views: readonly CalendarView[];
  onView: (view: CalendarView) => void;
  date: Date;
  onNavigate: (date: Date) => void;
  /** Minutes per slot (selections snap to it). */
  step: number;
  selectable?: boolean;
  onSelectSlot?: (range: { start: Date; end: Date; allDay: boolean }) => void;
  onSelectEvent?: (event: CalendarEvent<R>) => void;
  /** Month view: the shading of a day. */
  dayShade?: (day: Date) => DayShade | null;
  /** Controls drawn in the toolbar before the view switch. */
  toolbarExtra?: ReactNode;
  /** Accessible name of the calendar region. */
  label: string;
  busy?: boolean;
}

/** The page's own toolbar controls (a context, so the toolbar keeps its identity and focus). */
const ToolbarExtra = createContext<ReactNode>(null);

function Toolbar({ label, onNavigate, onView, view, views }: ToolbarProps<CalendarEvent>) {
  const { t } = useTranslation();
  const extra = useContext(ToolbarExtra);
  const names = (Array.isArray(views) ? views : []) as CalendarView[];
  return (
    <Group justify="space-between" gap="sm" mb="sm" wrap="wrap" data-testid="calendar-toolbar">
      <Group gap={4} wrap="nowrap">
        <Button variant="default" size="xs" onClick={() => onNavigate('TODAY')}>
          {t('common:calendar.today')}
        </Button>
        <ActionIcon
          variant="default"
          size="md"
          aria-label={t('common:calendar.previous')}
          onClick={() => onNavigate('PREV')}
          data-testid="calendar-previous"
        >
          <IconChevronLeft size={16} />
        </ActionIcon>
        <ActionIcon
          variant="default"
          size="md"
          aria-label={t('common:calendar.next')}
          onClick={() => onNavigate('NEXT')}
          data-testid="calendar-next"
        >
          <IconChevronRight size={16} />
        </ActionIcon>
      </Group>
      <Text fw={600} aria-live="polite" data-testid="calendar-range">
        {label}
      </Text>
      <Group gap="xs" wrap="wrap">
        {extra}
        {names.length > 1 && (
          <SegmentedControl
            size="xs"
            value={view}
            onChange={(value) => onView(value as View)}
            data={names.map((name) => ({ value: name, label: t(`common:calendar.views.${name}`) }))}
            aria-label={t('common:calendar.viewSwitch')}
            data-testid="calendar-views"
          />
        )}
      </Group>
    </Group>
  );
}

/** Month and agenda events: a button, so the keyboard reaches them. */
function EventButton({ event, title }: EventProps<CalendarEvent>) {
  return (
    <button
      type="button"
      className={classes.eventButton}
      aria-label={event.label}
      data-testid="calendar-event"
      data-kind={event.kind}
    >
      {title}
    </button>
  );
}

/** Week events: rbc draws them as buttons already. */
function EventText({ event, title }: EventProps<CalendarEvent>) {
  return (
    <span data-testid="calendar-event" data-kind={event.kind}>
      {title}
    </span>
  );
}

const COMPONENTS: Components<CalendarEvent> = {
  toolbar: Toolbar,
  month: { event: EventButton },
  agenda: { event: EventButton },
  week: { event: EventText },
};

export function PortalCalendar<R>({
  events,
  backgroundEvents = [],
  view,
  views,
  onView,
  date,
  onNavigate,
  step,
  selectable = false,
  onSelectSlot,
  onSelectEvent,
  dayShade,
  toolbarExtra,
  label,
  busy = false,
}: PortalCalendarProps<R>) {
  const { t, i18n } = useTranslation();
  const localizer = calendarLocalizer();
  const regionRef = useRef<HTMLDivElement>(null);
  useCalendarSemantics(regionRef);
  const formats = useMemo(() => calendarFormats(i18n.language), [i18n.language]);
  const messages = useMemo(() => calendarMessages(t), [t]);
  const select = useCallback(
    (event: CalendarEvent) => onSelectEvent?.(event as CalendarEvent<R>),
    [onSelectEvent],
  );
  const keyPress = useCallback(
    (event: CalendarEvent, e: SyntheticEvent<HTMLElement>) => {
      const key = 'key' in e ? (e as KeyboardEvent<HTMLElement>).key : '';
      // Month and agenda events are buttons: their click already selects.
      if ((e.target as HTMLElement | null)?.tagName === 'BUTTON') return;
      if (key === 'Enter' || key === ' ') {
        e.preventDefault();
        select(event);
      }
    },
    [select],
  );
  const slot = useCallback(
    (info: SlotInfo) =>
      onSelectSlot?.({ start: info.start, end: info.end, allDay: view === 'month' }),
    [onSelectSlot, view],
  );
  const eventProps = useCallback(
    (event: CalendarEvent) => ({ className: classes[event.kind] ?? '' }),
    [],
  );
  const dayProps = useCallback(
    (day: Date) => {
      const shade = view === 'month' ? dayShade?.(day) : null;
      return shade ? { className: DAY_CLASSES[shade] ?? '' } : {};
    },
    [dayShade, view],
  );
  const scrollToTime = useMemo(
    () => localizer.add(localizer.startOf(date, 'day'), 8, 'hours'),
    [date, localizer],
  );
  return (
    <Box
      ref={regionRef}
      className={classes.calendar}
      role="region"
      aria-label={label}
      aria-busy={busy}
      data-testid="calendar"
      data-view={view}
    >
      <ToolbarExtra.Provider value={toolbarExtra}>
        <Calendar<CalendarEvent>
          localizer={localizer}
          events={events as CalendarEvent[]}
          backgroundEvents={backgroundEvents as CalendarEvent[]}
          view={view}
          views={[...views]}
          onView={(next) => onView(next as CalendarView)}
          date={date}
          onNavigate={(next) => onNavigate(next)}
          step={step}
          timeslots={Math.max(1, Math.round(60 / step))}
          selectable={selectable}
          onSelectSlot={slot}
          onSelectEvent={select}
          onKeyPressEvent={keyPress}
          eventPropGetter={eventProps}
          dayPropGetter={dayProps}
          tooltipAccessor={(event) => event.label}
          components={COMPONENTS}
          formats={formats}
          messages={messages}
          length={AGENDA_DAYS}
          drilldownView={null}
          scrollToTime={scrollToTime}
          popup
        />
      </ToolbarExtra.Provider>
    </Box>
  );
}
