/**
 * The bookings screens against the real HTTP client over a stubbed fetch: the item calendar with
 * its bookings and the plan's windows, a new booking checked before it is sent (an overlap stays
 * on the start field, no call) and sent in UTC, a refusal's code shown on its field, and the
 * summary with a booking opening on its item's calendar.
 */
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import i18next from 'i18next';
import { initI18n } from '@/i18n/i18n';
import type { Booking, BookingPriority } from '@/generated/types';
import { formatDate, formatTime, toWireDate } from '@/lib/dates';
import { clearToken, setToken } from '@/lib/token';
import { renderEngine } from '@/resources/testing/engine-test-wrapper';
import common from '../../../locales/en/common.json';
import errors from '../../../locales/en/errors.json';
import { STEP_MINUTES, earliestStart } from './booking-rules';
import { BookingsPage } from './bookings-page';

const MINUTE = 60_000;
const fetchMock = vi.fn<typeof fetch>();
const sent: { method: string; url: string; body: unknown }[] = [];
const priority: BookingPriority = { forbid_time: 0, max_time: 240, max_items: 5, name: 'GPU box' };
let itemList: Booking[] = [];
let createAnswer: Response | null = null;

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

function jwt(): string {
  const enc = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, '');
  return `${enc({ alg: 'HS256' })}.${enc({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
}

beforeAll(async () => {
  // Errors are translated through the app's i18next, in English.
  await initI18n('en');
  await i18next.changeLanguage('en');
  await i18next.loadNamespaces(['common', 'errors']);
});

beforeEach(() => {
  sent.length = 0;
  createAnswer = null;
  const day = new Date();
  day.setHours(0, 0, 0, 0);
  itemList = [
    {
      id: 'b1',
      item_id: 'd1',
      item_type: 'desktop',
      title: 'Course',
      event_type: 'event',
      // At the start of today: in the week shown, before any new booking.
      start: toWireDate(day),
      end: toWireDate(day.valueOf() + STEP_MINUTES * MINUTE),
      editable: true,
    },
    {
      event_type: 'available',
      start: toWireDate(day),
      end: toWireDate(day.valueOf() + 3 * 24 * 60 * MINUTE),
      units: 4,
    },
  ];
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input, init) => {
    const url = String(input);
    const method = init?.method ?? 'GET';
    const raw = init?.body;
    sent.push({ method, url, body: typeof raw === 'string' ? JSON.parse(raw) : raw });
    if (url.includes('/bookings/user/d1/desktop')) return json(itemList);
    if (url.includes('/bookings/user?')) return json(itemList.slice(0, 1));
    if (url.endsWith('/bookings/priority/desktop/d1')) return json(priority);
    // The start-now limit: without a plan in force now the server refuses it.
    if (url.endsWith('/booking/max_booking_date/d1'))
      return json(
        { error: 'precondition_required', description_code: 'current_plan_doesnt_match' },
        428,
      );
    if (url.endsWith('/booking/event') && method === 'POST')
      return createAnswer ?? json({ id: 'b2', event_type: 'event', start: 'x', end: 'y' });
    return json({}, 404);
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

function renderItem() {
  return renderEngine(<BookingsPage resource="bookings" kind="show" />, {
    url: '/booking/desktop/d1',
    path: '/booking/:type/:id',
  });
}

const posts = () => sent.filter((call) => call.method === 'POST');

describe('item calendar', () => {
  it('shows the item, its bookings and the plan availability in the week view', async () => {
    renderItem();
    expect(await screen.findByText('Bookings · GPU box')).toBeInTheDocument();
    const calendar = await screen.findByTestId('calendar');
    expect(calendar).toHaveAttribute('data-view', 'week');
    await waitFor(() =>
      expect(
        within(calendar)
          .getAllByTestId('calendar-event')
          .map((event) => event.getAttribute('data-kind')),
      ).toEqual(expect.arrayContaining(['event', 'available'])),
    );
    expect(within(calendar).getByText('Course')).toBeInTheDocument();
    const query = sent.find((call) => call.url.includes('/bookings/user/d1/desktop'))?.url ?? '';
    const params = new URL(query, 'http://x').searchParams;
    expect(params.get('startDate')).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\+0000$/);
    expect(params.get('returnType')).toBe('all');
  });

  it('sends a new booking in UTC on the 30-minute grid', async () => {
    renderItem();
    const button = await screen.findByTestId('booking-new');
    const before = Date.now();
    fireEvent.click(button);
    const after = Date.now();
    const modal = await screen.findByTestId('booking-modal');
    fireEvent.change(within(modal).getByTestId('booking-title'), { target: { value: 'Lab' } });
    fireEvent.click(within(modal).getByTestId('booking-save'));
    await waitFor(() => expect(posts()).toHaveLength(1));
    const body = posts()[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({ element_id: 'd1', element_type: 'desktop', title: 'Lab' });
    // The first step after the advance notice from the click on, one step long.
    const start = [before, after]
      .map((moment) => earliestStart(moment, priority))
      .find((moment) => toWireDate(moment) === body.start);
    expect(start).toBeDefined();
    expect(body.end).toBe(toWireDate((start?.valueOf() ?? 0) + STEP_MINUTES * MINUTE));
    expect(Object.keys(body).sort()).toEqual([
      'element_id',
      'element_type',
      'end',
      'start',
      'title',
    ]);
    await waitFor(() => expect(screen.queryByTestId('booking-modal')).not.toBeInTheDocument());
  });

  it('limits a booking by the latest date of the item, without asking the start-now limit', async () => {
    const latest = new Date(Date.now() + 14 * 24 * 60 * MINUTE);
    priority.max_booking_date = toWireDate(latest);
    try {
      renderItem();
      fireEvent.click(await screen.findByTestId('booking-new'));
      const modal = await screen.findByTestId('booking-modal');
      expect(within(modal).getByTestId('booking-limits')).toHaveTextContent(
        common.bookings.limits.until.replace('{{date}}', formatDate(latest.valueOf() / 1000)),
      );
      expect(sent.some((call) => call.url.includes('/booking/max_booking_date/'))).toBe(false);
    } finally {
      delete priority.max_booking_date;
    }
  });

  describe('at a fixed time (10:05 today)', () => {
    beforeEach(() => {
      const today = new Date();
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(new Date(today.getFullYear(), today.getMonth(), today.getDate(), 10, 5));
      // A token that expires an hour after the faked time: one minted at the real time would have
      // expired by 10:05 when the run is before 09:05, and the page would end the session.
      setToken(jwt());
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    /** A booking of the item from the earliest start (10:30) until 11:30. */
    const bookEarliest = (): Date => {
      const start = earliestStart(Date.now(), priority);
      itemList[0] = {
        ...(itemList[0] as Booking),
        start: toWireDate(start),
        end: toWireDate(start.valueOf() + 60 * MINUTE),
      };
      return start;
    };

    it('proposes the first free step after the existing booking', async () => {
      const booked = bookEarliest();
      renderItem();
      await screen.findByText('Course');
      fireEvent.click(await screen.findByTestId('booking-new'));
      const modal = await screen.findByTestId('booking-modal');
      fireEvent.click(within(modal).getByTestId('booking-save'));
      await waitFor(() => expect(posts()).toHaveLength(1));
      expect(posts()[0]?.body).toMatchObject({
        start: toWireDate(booked.valueOf() + 60 * MINUTE),
        end: toWireDate(booked.valueOf() + (60 + STEP_MINUTES) * MINUTE),
      });
    });

    it('keeps an overlapping booking in the form with the overlap on its start', async () => {
      const booked = bookEarliest();
      renderItem();
      await screen.findByText('Course');
      fireEvent.click(await screen.findByTestId('booking-new'));
      const modal = await screen.findByTestId('booking-modal');
      // The user moves the proposed start onto the booking.
      const time = within(modal).getByTestId('booking-start-time');
      fireEvent.click(time);
      await waitFor(() => expect(time).toHaveAttribute('aria-controls'));
      const listbox = document.getElementById(time.getAttribute('aria-controls') ?? '');
      fireEvent.click(
        within(listbox as HTMLElement).getByRole('option', {
          name: formatTime(booked),
          hidden: true,
        }),
      );
      fireEvent.click(within(modal).getByTestId('booking-save'));
      expect(await within(modal).findByTestId('booking-start-error')).toHaveTextContent(
        errors.booking_overlap,
      );
      expect(posts()).toHaveLength(0);
    });
  });

  it('shows a refusal on the field its rule names', async () => {
    createAnswer = json(
      {
        error: 'precondition_required',
        msg: 'too long',
        description: 'too long',
        description_code: 'max_time_reached',
        params: null,
      },
      428,
    );
    renderItem();
    fireEvent.click(await screen.findByTestId('booking-new'));
    const modal = await screen.findByTestId('booking-modal');
    fireEvent.click(within(modal).getByTestId('booking-save'));
    expect(await within(modal).findByTestId('booking-end-error')).toHaveTextContent(
      errors.max_time_reached,
    );
  });

  it('opens a booking in the view modal with its actions', async () => {
    renderItem();
    fireEvent.click(await screen.findByText('Course'));
    const modal = await screen.findByTestId('booking-modal');
    expect(modal).toHaveAttribute('data-mode', 'view');
    expect(within(modal).getByTestId('booking-edit')).toBeInTheDocument();
    expect(within(modal).getByTestId('booking-delete')).toBeInTheDocument();
    fireEvent.click(within(modal).getByTestId('booking-edit'));
    await waitFor(() =>
      expect(screen.getByTestId('booking-modal')).toHaveAttribute('data-mode', 'edit'),
    );
  });
});

describe('summary', () => {
  it('lists the caller’s bookings and leads to the item calendar', async () => {
    renderEngine(<BookingsPage resource="bookings" kind="list" />, { url: '/booking/summary' });
    const calendar = await screen.findByTestId('calendar');
    expect(calendar).toHaveAttribute('data-view', 'agenda');
    fireEvent.click(await within(calendar).findByRole('button', { name: /^Course,/ }));
    const modal = await screen.findByTestId('booking-modal');
    expect(within(modal).getByTestId('booking-item-link')).toHaveAttribute(
      'href',
      '/booking/desktop/d1',
    );
  });
});
