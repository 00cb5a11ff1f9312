/**
 * Starting a desktop that uses a scarce resource (a GPU profile). A desktop that needs a booking
 * and has none in force is not started as is: its card offers the start-now modal (book from now
 * until a chosen end, then start). A start the server refuses for the GPU plan opens the
 * cannot-start-now modal (change the profile and start, or book for later), and one refused for
 * the lack of a booking opens the start-now modal, whichever screen asked for the start (the card's
 * Start, its Open). The modal to show is one shared prompt the desktop's card draws.
 */
import { useSyncExternalStore } from 'react';
import { constants } from '@/generated/constants';
import type { Desktop } from '@/generated/types';
import { ceilToStep, toWireDate } from '@/lib/dates';
import { onOperationFailure, request, type ApiError } from '@/providers/http-client';
import { routePath } from '@/resources/actions/available-actions';

export type BookingPromptKind = 'startNow' | 'cannotStartNow';

export interface BookingPrompt {
  desktopId: string;
  kind: BookingPromptKind;
  /** The refusal's code (cannot-start-now explains it). */
  code: string | null;
}

/** Refusal codes of a start that the GPU plan explains (cannot start now). */
export const GPU_PLAN_CODES: readonly string[] = [
  'current_plan_doesnt_match',
  'no_available_profile',
];
/** Refusal codes of a start that a booking from now solves (start now). */
export const NOT_BOOKED_CODES: readonly string[] = ['desktop_not_booked'];

const bookings = constants.bookings;
const MINUTE = 60_000;

let prompt: BookingPrompt | null = null;
const listeners = new Set<() => void>();

function setPrompt(next: BookingPrompt | null): void {
  prompt = next;
  for (const listener of listeners) listener();
}

/** Opens a desktop's start-now or cannot-start-now modal (replacing any other). */
export function openBookingPrompt(next: BookingPrompt): void {
  setPrompt(next);
}

export function closeBookingPrompt(): void {
  setPrompt(null);
}

/** The prompt of one desktop (null when its card shows none). */
export function useBookingPrompt(desktopId: string): BookingPrompt | null {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => (prompt?.desktopId === desktopId ? prompt : null),
    () => null,
  );
}

/** The modal a refused call asks for: only starts of a desktop with one of the codes above. */
export function promptForFailure(
  key: string,
  params: Readonly<Record<string, string | number>>,
  error: Pick<ApiError, 'description_code' | 'error'>,
): BookingPrompt | null {
  if (key !== 'desktops.action' || params.action !== 'start' || params.id === undefined)
    return null;
  const code = error.description_code ?? error.error ?? null;
  if (!code) return null;
  const desktopId = String(params.id);
  if (GPU_PLAN_CODES.includes(code)) return { desktopId, kind: 'cannotStartNow', code };
  if (NOT_BOOKED_CODES.includes(code)) return { desktopId, kind: 'startNow', code };
  return null;
}

let following = false;

/** Follows refused starts from every screen (once). */
export function followStartRefusals(): void {
  if (following) return;
  following = true;
  onOperationFailure((key, params, error) => {
    const next = promptForFailure(key, params, error);
    if (next) openBookingPrompt(next);
  });
}

/**
 * True when the desktop needs a booking to start (it has a GPU profile) and none is in force now.
 */
export function needsBookingNow(desktop: Pick<Desktop, 'reservables' | 'booking_id'>): boolean {
  return currentProfile(desktop) !== null && !desktop.booking_id;
}

/** The desktop's bookable profile (its first GPU profile), if any. */
export function currentProfile(desktop: Pick<Desktop, 'reservables'>): string | null {
  return desktop.reservables?.vgpus?.[0] ?? null;
}

/**
 * The end choices of a booking from `now`: every step of the local clock (30 minutes) at least
 * the minimum length after now, up to `max` (the profile's maximum booking date) and to the
 * start-now cap; none when less time than the start-now minimum is left.
 */
export function endChoices(now: number, max: Date | null): Date[] {
  if (!max) return [];
  const limit = Math.min(max.valueOf(), now + bookings.startNowMaxMinutes.value * MINUTE);
  if (limit - now < bookings.startNowMinMinutes.value * MINUTE) return [];
  const step = bookings.timeStepMinutes.value;
  const choices: Date[] = [];
  let next = ceilToStep(now + bookings.minDurationMinutes.value * MINUTE, step);
  while (next.valueOf() <= limit) {
    choices.push(next);
    next = new Date(next.valueOf() + step * MINUTE);
  }
  return choices;
}

/** Sets the desktop's bookable profile. */
export function changeProfile(desktopId: string, profile: string): Promise<unknown> {
  return request('desktops.updateReservables', {
    params: { id: desktopId },
    body: { reservables: { vgpus: [profile] } },
  });
}

function start(desktopId: string): Promise<unknown> {
  return request('desktops.action', { params: { id: desktopId, action: 'start' } });
}

/**
 * Start now: the profile first when another was chosen, then a booking from now until `end`
 * (`now: true`, in force at once), then the start.
 */
export async function bookAndStart(
  desktop: Pick<Desktop, 'id' | 'reservables'>,
  profile: string | null,
  end: Date,
  now = Date.now(),
): Promise<void> {
  if (profile && profile !== currentProfile(desktop)) await changeProfile(desktop.id, profile);
  await request('bookings.create', {
    body: {
      element_id: desktop.id,
      element_type: 'desktop',
      start: toWireDate(now),
      end: toWireDate(end),
      now: true,
    },
  });
  await start(desktop.id);
}

/** The booking calendar of a desktop (`/booking/desktop/<id>`). */
export function desktopBookingHref(desktopId: string): string | null {
  const path = routePath('bookings', 'show');
  return path
    ? path.replace(':type', 'desktop').replace(':id', encodeURIComponent(desktopId))
    : null;
}
