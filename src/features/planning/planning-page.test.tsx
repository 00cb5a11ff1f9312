/**
 * The planning screen against the real HTTP client over a stubbed fetch: the first item and its
 * plans, a new plan sent in UTC for the item and profile, a plan that would overlap another of
 * the card kept in the form, and a plan deleted after its confirmation.
 */
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import i18next from 'i18next';
import { initI18n } from '@/i18n/i18n';
import { constants } from '@/generated/constants';
import type { PlannerEvent } from '@/generated/types';
import { ceilToStep, toWireDate } from '@/lib/dates';
import { clearToken, setToken } from '@/lib/token';
import { renderEngine } from '@/resources/testing/engine-test-wrapper';
import errors from '../../../locales/en/errors.json';
import { PlanningPage } from './planning-page';

const MINUTE = 60_000;
const STEP = constants.bookings.timeStepMinutes.value;
const fetchMock = vi.fn<typeof fetch>();
const sent: { method: string; url: string; body: unknown }[] = [];
let plans: PlannerEvent[] = [];

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
  const day = new Date();
  day.setHours(0, 0, 0, 0);
  plans = [
    {
      id: 'p1',
      item_id: 'card1',
      subitem_id: 'A16-2Q',
      units: 8,
      start: toWireDate(day),
      end: toWireDate(day.valueOf() + STEP * MINUTE),
    },
  ];
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input, init) => {
    const url = String(input);
    const method = init?.method ?? 'GET';
    const raw = init?.body;
    sent.push({ method, url, body: typeof raw === 'string' ? JSON.parse(raw) : raw });
    if (url.endsWith('/admin/reservables')) return json(['gpus']);
    if (url.endsWith('/admin/reservables/gpus')) return json([{ id: 'card1', name: 'A16 card' }]);
    if (url.endsWith('/admin/reservables/enabled/gpus/card1'))
      return json([{ id: 'A16-2Q', name: 'A16 2Q', units: 8 }]);
    if (url.includes('/admin/reservables_planner/card1/')) return json(plans);
    if (url.endsWith('/admin/reservables_planner') && method === 'POST') return json('p2');
    if (url.endsWith('/admin/reservables_planner/p1') && method === 'DELETE') return json({});
    return json({}, 404);
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

function renderPlanning() {
  return renderEngine(<PlanningPage />, { url: '/planning', role: 'admin' });
}

describe('PlanningPage', () => {
  it('shows the first item and its plans with their profile and units', async () => {
    renderPlanning();
    const calendar = await screen.findByTestId('calendar');
    expect(await within(calendar).findByText('A16 2Q (8 units)')).toBeInTheDocument();
    const list = sent.find((call) => call.url.includes('/admin/reservables_planner/card1/'));
    expect(decodeURIComponent(list?.url ?? '')).toMatch(
      /card1\/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\+0000\/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\+0000$/,
    );
  });

  it('creates a plan of the card for its single profile, in UTC', async () => {
    plans = [];
    renderPlanning();
    const before = Date.now();
    fireEvent.click(await screen.findByTestId('plan-new'));
    const after = Date.now();
    const modal = await screen.findByTestId('plan-modal');
    fireEvent.click(within(modal).getByTestId('plan-save'));
    await waitFor(() => expect(sent.some((call) => call.method === 'POST')).toBe(true));
    const body = sent.find((call) => call.method === 'POST')?.body as Record<string, unknown>;
    expect(body).toMatchObject({ item_type: 'gpus', item_id: 'card1', subitem_id: 'A16-2Q' });
    // The first step from the click on, one step long.
    const starts = [before, after].map((moment) => ceilToStep(moment, STEP));
    const start = starts.find((moment) => toWireDate(moment) === body.start);
    expect(start).toBeDefined();
    expect(body.end).toBe(toWireDate((start?.valueOf() ?? 0) + STEP * MINUTE));
  });

  it('keeps a plan that overlaps another of the card in the form', async () => {
    const start = ceilToStep(Date.now(), STEP);
    plans = [
      {
        id: 'p1',
        item_id: 'card1',
        subitem_id: 'A16-2Q',
        start: toWireDate(start),
        end: toWireDate(start.valueOf() + 2 * STEP * MINUTE),
      },
    ];
    renderPlanning();
    await waitFor(() =>
      expect(sent.some((call) => call.url.includes('/admin/reservables_planner/card1/'))).toBe(
        true,
      ),
    );
    await waitFor(() => expect(screen.queryByTestId('calendar-skeleton')).not.toBeInTheDocument());
    fireEvent.click(await screen.findByTestId('plan-new'));
    const modal = await screen.findByTestId('plan-modal');
    fireEvent.click(within(modal).getByTestId('plan-save'));
    expect(await within(modal).findByTestId('plan-start-error')).toHaveTextContent(
      errors.plan_overlap,
    );
    expect(sent.some((call) => call.method === 'POST')).toBe(false);
  });

  it('deletes a plan after its confirmation', async () => {
    renderPlanning();
    const calendar = await screen.findByTestId('calendar');
    fireEvent.click(await within(calendar).findByText('A16 2Q (8 units)'));
    const modal = await screen.findByTestId('plan-modal');
    expect(modal).toHaveAttribute('data-mode', 'edit');
    fireEvent.click(within(modal).getByTestId('plan-delete'));
    fireEvent.click(within(modal).getByTestId('plan-delete-confirm'));
    await waitFor(() =>
      expect(sent.some((call) => call.method === 'DELETE' && call.url.endsWith('/p1'))).toBe(true),
    );
  });
});
