/**
 * The calendars' localizer: react-big-calendar's dayjs localizer over a dayjs whose weeks start
 * on the day the schema names (`constants.bookings.weekStartsOn`), without changing the global
 * dayjs locale the rest of the app uses. Labels (weekday and month names, toolbar words) come
 * from the interface language through src/lib/dates and the `common:calendar` texts; days are
 * YYYY-MM-DD and times 24-hour HH:mm as everywhere in the portal.
 */
import dayjs from 'dayjs';
import type { TFunction } from 'i18next';
import {
  dayjsLocalizer,
  type DateLocalizer,
  type Formats,
  type Messages,
} from 'react-big-calendar';
import { constants } from '@/generated/constants';
import {
  formatDay,
  formatDayWithWeekday,
  formatMonthYear,
  formatTime,
  formatWeekday,
} from '@/lib/dates';

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** Day index (0 = Sunday) the calendar weeks start on. */
export const WEEK_START = Math.max(0, WEEKDAYS.indexOf(constants.bookings.weekStartsOn.value));

const LOCALE_NAME = 'portal-calendar-week';

let localizer: DateLocalizer | null = null;

/** The shared localizer (built once). */
export function calendarLocalizer(): DateLocalizer {
  if (localizer) return localizer;
  // The plain localizer first: it installs the dayjs plugins the wrapped one reads as statics.
  dayjsLocalizer(dayjs);
  const english = dayjs.Ls.en;
  if (english)
    dayjs.locale({ ...english, name: LOCALE_NAME, weekStart: WEEK_START }, undefined, true);
  const weekDayjs = ((date?: dayjs.ConfigType) => dayjs(date).locale(LOCALE_NAME)) as typeof dayjs;
  const built = dayjsLocalizer(Object.assign(weekDayjs, dayjs));
  built.startOfWeek = () => WEEK_START as 0 | 1 | 2 | 3 | 4 | 5 | 6;
  localizer = built;
  return built;
}

/**
 * The calendar's formats in `language`, from the portal's date helpers: days as YYYY-MM-DD (with
 * the weekday's name in `language` where a day stands alone), times as HH:mm, month headers in
 * words.
 */
export function calendarFormats(language: string): Formats {
  const timeRange = ({ start, end }: { start: Date; end: Date }): string =>
    `${formatTime(start)} – ${formatTime(end)}`;
  const dayRange = ({ start, end }: { start: Date; end: Date }): string =>
    `${formatDay(start)} – ${formatDay(end)}`;
  return {
    dateFormat: (date) => String(date.getDate()).padStart(2, '0'),
    dayFormat: (date) =>
      `${formatWeekday(date, language, 'short')} ${String(date.getDate()).padStart(2, '0')}`,
    weekdayFormat: (date) => formatWeekday(date, language, 'short'),
    timeGutterFormat: (date) => formatTime(date),
    monthHeaderFormat: (date) => formatMonthYear(date, language),
    dayHeaderFormat: (date) => formatDayWithWeekday(date, language, 'long'),
    dayRangeHeaderFormat: dayRange,
    agendaHeaderFormat: dayRange,
    agendaDateFormat: (date) => formatDayWithWeekday(date, language),
    agendaTimeFormat: (date) => formatTime(date),
    agendaTimeRangeFormat: timeRange,
    eventTimeRangeFormat: timeRange,
    eventTimeRangeStartFormat: ({ start }) => `${formatTime(start)} –`,
    eventTimeRangeEndFormat: ({ end }) => `– ${formatTime(end)}`,
    selectRangeFormat: timeRange,
  };
}

/** The calendar's own words in the interface language. */
export function calendarMessages(t: TFunction): Messages {
  return {
    date: t('common:calendar.date'),
    time: t('common:calendar.time'),
    event: t('common:calendar.event'),
    allDay: t('common:calendar.allDay'),
    week: t('common:calendar.views.week'),
    month: t('common:calendar.views.month'),
    agenda: t('common:calendar.views.agenda'),
    day: t('common:calendar.views.day'),
    previous: t('common:calendar.previous'),
    next: t('common:calendar.next'),
    today: t('common:calendar.today'),
    noEventsInRange: t('common:calendar.empty'),
    showMore: (count: number) => t('common:calendar.showMore', { count }),
  };
}

export type CalendarView = 'week' | 'month' | 'agenda';

/** Days the agenda view covers. */
export const AGENDA_DAYS = 30;

/** The span a view shows around `date` (what to ask the server for). */
export function visibleRange(view: CalendarView, date: Date): { start: Date; end: Date } {
  const local = calendarLocalizer();
  if (view === 'month') {
    const start = local.firstVisibleDay(date, local);
    const last = local.lastVisibleDay(date, local);
    return { start: local.startOf(start, 'day'), end: local.endOf(last, 'day') };
  }
  if (view === 'week') {
    const day = local.startOf(date, 'day');
    const start = local.add(day, -((day.getDay() - WEEK_START + 7) % 7), 'day');
    return { start, end: local.endOf(local.add(start, 6, 'day'), 'day') };
  }
  const start = local.startOf(date, 'day');
  return { start, end: local.endOf(local.add(start, AGENDA_DAYS - 1, 'day'), 'day') };
}
