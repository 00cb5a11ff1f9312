/**
 * The desktop card's booking parts against the real HTTP client over a stubbed fetch: the next
 * booking line, Start now in place of Start and Open for a desktop without the booking it needs
 * (book from now, then start), and the cannot-start-now modal a start refused for the GPU plan
 * opens (change the profile, then start).
 */
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Desktop } from '@/generated/types';
import { formatDate, formatTimeWithSeconds, parseWireDate, toWireDate } from '@/lib/dates';
import { resetSessionState, updateSessionState } from '@/lib/session-state';
import { clearToken, setToken } from '@/lib/token';
import { requestOperation } from '@/providers/http-client';
import { registerActionHandler } from '@/resources/actions/action-registry';
import { renderEngine } from '@/resources/testing/engine-test-wrapper';
import { closeBookingPrompt } from './booking-start';
import { DesktopCard } from './desktop-card';

// Other features draw these actions; stand-ins show where the card puts them.
registerActionHandler('openDesktop', () => <button type="button" data-testid="desktop-open" />);
registerActionHandler('directLinkModal', () => null);
registerActionHandler('bastionModal', () => null);

const fetchMock = vi.fn<typeof fetch>();
const sent: { method: string; url: string; body: unknown }[] = [];
const HOUR = 3_600_000;

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

function desktop(patch: Partial<Desktop> = {}): Readonly<Record<string, unknown>> {
  const record: Desktop = {
    id: 'd1',
    name: 'GPU desktop',
    state: 'stopped',
    type: 'persistent',
    image: '1',
    viewers: ['browser-vnc'],
    accessed: 0,
    version: 1,
    reservables: { vgpus: ['A16-2Q'] },
    ...patch,
  };
  return { ...record };
}

/** A desktop without a GPU profile: the list leaves `reservables` out. */
function withoutProfile(patch: Partial<Desktop> = {}): Readonly<Record<string, unknown>> {
  const { reservables: _profile, ...record } = desktop(patch);
  return record;
}

const maxDate = toWireDate(Date.now() + 3 * HOUR);

beforeEach(() => {
  sent.length = 0;
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input, init) => {
    const url = String(input);
    const method = init?.method ?? 'GET';
    const raw = init?.body;
    const body: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
    sent.push({ method, url, body });
    if (url.endsWith('/booking/reservables_available'))
      return json({
        reservables_available: [
          { id: 'A16-2Q', name: 'A16 2Q', max_booking_date: maxDate },
          { id: 'A16-4Q', name: 'A16 4Q', max_booking_date: maxDate },
        ],
      });
    if (url.endsWith('/booking/max_booking_date/d1')) return json({ max_booking_date: maxDate });
    if (url.endsWith('/booking/event') && method === 'POST')
      return json({ id: 'b1', event_type: 'event', start: 'x', end: 'y' });
    if (url.endsWith('/domain/reservables/d1') && method === 'PUT') return json({});
    if (url.endsWith('/desktop/start/d1')) return json({ status: 'ok' });
    return json({}, 404);
  });
});

afterEach(() => {
  act(() => closeBookingPrompt());
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

const calls = () => sent.map((call) => `${call.method} ${call.url.replace('/api/v3', '')}`);

describe('DesktopCard bookings', () => {
  it('shows the next booking of the record in local time', () => {
    renderEngine(
      <DesktopCard
        resource="desktops"
        record={desktop({
          next_booking_start: '2026-11-23T10:00+0000',
          next_booking_end: '2026-11-23T12:30+0000',
        })}
      />,
    );
    const line = screen.getByTestId('desktop-next-booking');
    expect(line).toHaveTextContent(
      `Next booking: ${formatDate('2026-11-23T10:00+0000')} – ${formatDate('2026-11-23T12:30+0000')}`,
    );
  });

  it('shows no booking line without a next booking', () => {
    renderEngine(<DesktopCard resource="desktops" record={withoutProfile()} />);
    expect(screen.queryByTestId('desktop-next-booking')).not.toBeInTheDocument();
  });

  it("shows the guest's address while it has one, and no address line otherwise", () => {
    renderEngine(
      <DesktopCard resource="desktops" record={desktop({ state: 'started', ip: '10.87.0.17' })} />,
    );
    expect(screen.getByText(/10\.87\.0\.17/)).toBeInTheDocument();
    cleanup();
    renderEngine(<DesktopCard resource="desktops" record={desktop({ state: 'started' })} />);
    expect(screen.queryByText(/10\.87\.0\.17/)).not.toBeInTheDocument();
  });

  it("shows the percent of its disk's or media's copy to a host, and its queue place otherwise", () => {
    renderEngine(
      <DesktopCard
        resource="desktops"
        record={desktop({ state: 'starting', queue: { event: 'copy_disk', percent: 42 } })}
      />,
    );
    expect(screen.getByTestId('record-progress')).toHaveTextContent(
      'Copying its disk to the host: 42 %',
    );
    cleanup();
    renderEngine(
      <DesktopCard
        resource="desktops"
        record={desktop({ state: 'starting', queue: { event: 'copy_media', percent: 7 } })}
      />,
    );
    expect(screen.getByTestId('record-progress')).toHaveTextContent(
      'Copying its media to the host: 7 %',
    );
    cleanup();
    renderEngine(
      <DesktopCard
        resource="desktops"
        record={desktop({ state: 'starting', queue: { position: 3, event: 'start_domain' } })}
      />,
    );
    expect(screen.queryByTestId('record-progress')).not.toBeInTheDocument();
    expect(screen.getByTestId('record-queue')).toHaveTextContent('Queue position: 3');
  });

  it('offers Start now instead of Start and Open while no booking is in force', () => {
    renderEngine(<DesktopCard resource="desktops" record={desktop()} />);
    const card = screen.getByTestId('record');
    expect(within(card).getByRole('button', { name: 'Start now' })).toBeInTheDocument();
    expect(within(card).queryByTestId('desktop-open')).toBeNull();
    expect(card.querySelector('[data-action="book"]')).toHaveAttribute(
      'href',
      '/booking/desktop/d1',
    );
  });

  it('keeps Open for a desktop whose booking is in force', () => {
    renderEngine(<DesktopCard resource="desktops" record={desktop({ booking_id: 'b1' })} />);
    const card = screen.getByTestId('record');
    expect(card.querySelector('[data-action="startNow"]')).toBeNull();
    expect(within(card).getByTestId('desktop-open')).toBeInTheDocument();
  });

  it('start now books from now until the chosen end, then starts the desktop', async () => {
    renderEngine(<DesktopCard resource="desktops" record={desktop()} />);
    fireEvent.click(screen.getByRole('button', { name: 'Start now' }));
    const modal = await screen.findByTestId('start-now-modal');
    const submit = within(modal).getByTestId('start-now-submit');
    await waitFor(() => expect(submit).toBeEnabled());
    fireEvent.click(submit);
    await waitFor(() => expect(calls()).toContain('GET /desktop/start/d1'));

    const order = calls();
    expect(order.indexOf('POST /booking/event')).toBeGreaterThan(-1);
    expect(order.indexOf('POST /booking/event')).toBeLessThan(
      order.indexOf('GET /desktop/start/d1'),
    );
    // The desktop's own profile is available: it is not changed.
    expect(order).not.toContain('PUT /domain/reservables/d1');
    const booking = sent.find((call) => call.url.endsWith('/booking/event'))?.body as Record<
      string,
      unknown
    >;
    expect(booking).toMatchObject({ element_id: 'd1', element_type: 'desktop', now: true });
    const start = parseWireDate(String(booking.start));
    const end = parseWireDate(String(booking.end));
    expect(start && end && end > start).toBe(true);
    expect((end?.getMinutes() ?? 1) % 30).toBe(0);
    await waitFor(() => expect(screen.queryByTestId('start-now-modal')).not.toBeInTheDocument());
  });

  it('a start refused for the GPU plan opens cannot-start-now: change the profile, book, then start', async () => {
    // A booking in force: the card offers Start, which the server refuses for the GPU plan.
    renderEngine(<DesktopCard resource="desktops" record={desktop({ booking_id: 'b1' })} />);
    fetchMock.mockImplementationOnce(async (input, init) => {
      sent.push({ method: init?.method ?? 'GET', url: String(input), body: undefined });
      return json(
        {
          error: 'precondition_required',
          msg: 'plan',
          description: 'plan',
          description_code: 'current_plan_doesnt_match',
          params: null,
        },
        428,
      );
    });
    await act(async () => {
      await requestOperation('desktops.action', { params: { id: 'd1', action: 'start' } }).catch(
        () => undefined,
      );
    });
    const modal = await screen.findByTestId('cannot-start-now-modal');
    const submit = within(modal).getByTestId('cannot-start-submit');
    await waitFor(() => expect(submit).toBeEnabled());
    sent.length = 0;
    fireEvent.click(submit);
    await waitFor(() => expect(calls()).toContain('GET /desktop/start/d1'));
    expect(calls()).toEqual([
      'PUT /domain/reservables/d1',
      'POST /booking/event',
      'GET /desktop/start/d1',
    ]);
    expect(sent[0]?.body).toEqual({ reservables: { vgpus: ['A16-4Q'] } });
    expect(sent[1]?.body).toMatchObject({ element_id: 'd1', element_type: 'desktop', now: true });
    expect(within(modal).getByTestId('cannot-start-bookings')).toHaveAttribute(
      'href',
      '/booking/desktop/d1',
    );
    await waitFor(() =>
      expect(screen.queryByTestId('cannot-start-now-modal')).not.toBeInTheDocument(),
    );
  });

  it('a start-now booking refused for the GPU plan hands over to cannot-start-now', async () => {
    const plain = fetchMock.getMockImplementation();
    fetchMock.mockImplementation(async (input, init) => {
      if (String(input).endsWith('/booking/event') && init?.method === 'POST') {
        sent.push({ method: 'POST', url: String(input), body: undefined });
        return json(
          {
            error: 'precondition_required',
            msg: 'plan',
            description: 'plan',
            description_code: 'current_plan_doesnt_match',
            params: null,
          },
          428,
        );
      }
      return plain ? plain(input, init) : json({}, 404);
    });
    renderEngine(<DesktopCard resource="desktops" record={desktop()} />);
    fireEvent.click(screen.getByRole('button', { name: 'Start now' }));
    const modal = await screen.findByTestId('start-now-modal');
    const submit = within(modal).getByTestId('start-now-submit');
    await waitFor(() => expect(submit).toBeEnabled());
    fireEvent.click(submit);
    expect(await screen.findByTestId('cannot-start-now-modal')).toBeInTheDocument();
    expect(screen.queryByTestId('start-now-modal')).not.toBeInTheDocument();
    expect(calls()).not.toContain('GET /desktop/start/d1');
  });

  it('start now hands over to cannot-start-now when the plan does not offer the own profile now', async () => {
    const plain = fetchMock.getMockImplementation();
    fetchMock.mockImplementation(async (input, init) => {
      if (String(input).endsWith('/booking/max_booking_date/d1')) {
        sent.push({ method: 'GET', url: String(input), body: undefined });
        return json(
          {
            error: 'precondition_required',
            msg: 'plan',
            description: 'plan',
            description_code: 'current_plan_doesnt_match',
            params: null,
          },
          428,
        );
      }
      return plain ? plain(input, init) : json({}, 404);
    });
    renderEngine(<DesktopCard resource="desktops" record={desktop()} />);
    fireEvent.click(screen.getByRole('button', { name: 'Start now' }));
    const modal = await screen.findByTestId('cannot-start-now-modal');
    expect(within(modal).getByTestId('cannot-start-reason')).toBeInTheDocument();
    expect(screen.queryByTestId('start-now-modal')).not.toBeInTheDocument();
    expect(calls()).not.toContain('POST /booking/event');
  });
});

describe('DesktopCard shutting down', () => {
  const config = {
    show_bookings_button: false,
    documentation_url: '',
    viewers_documentation_url: '',
    show_temporal_tab: true,
    show_change_email_button: true,
    http_port: '80',
    https_port: '443',
    bastion_domain: null,
    bastion_ssh_port: null,
    can_use_bastion: false,
    can_use_bastion_individual_domains: false,
    migrations_block: false,
    desktop_shutdown_timeout: 20,
    session: { id: 's', max_renew_time: 0, max_time: 0 },
  };
  afterEach(() => resetSessionState());

  it('names the timeout and when the desktop is forced off, only while it shuts down', () => {
    let setState: (state: Desktop['state']) => void = () => undefined;
    function Live() {
      const [state, set] = useState<Desktop['state']>('shutting-down');
      setState = set;
      return <DesktopCard resource="desktops" record={withoutProfile({ state })} />;
    }
    const before = Date.now();
    renderEngine(<Live />);
    act(() => updateSessionState({ config }));
    const hint = screen.getByTestId('desktop-shutdown-hint');
    const at = (moment: number) => formatTimeWithSeconds(new Date(moment + 20_000));
    const text = hint.textContent ?? '';
    expect(text).toContain('20 s');
    expect([at(before), at(Date.now())].some((time) => text.includes(time))).toBe(true);
    act(() => setState('stopped'));
    expect(screen.queryByTestId('desktop-shutdown-hint')).not.toBeInTheDocument();
  });
});
