/**
 * Booking test fixtures on top of the demo seed: reservable items with profiles, plans and
 * priority rules written straight to the database, desktops and deployments that name a profile,
 * the time steps bookings fall on, and the booking calls.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import {
  bookingPriorities,
  deployments,
  plannerEvents,
  reservableItems,
  reservableProfiles,
  type BookingRuleInsert,
  type UserRow,
} from '../../src/platform/db/schema.ts';
import { demoHardware } from '../../src/seed/index.ts';
import { addDesktop } from './fixtures.ts';
import { injectWithToken } from './helper.ts';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const STEP = 30 * MINUTE;

/** The n-th 30-minute step after `from` (n = 1: the next one). */
export const step = (n: number, from = Date.now()): Date =>
  new Date((Math.floor(from / STEP) + n) * STEP);

/**
 * Steps counted from one instant, taken now: a test that names several steps keeps naming the
 * same ones even if the clock passes a step meanwhile.
 */
export const steps =
  (from = Date.now()) =>
  (n: number, base = from): Date =>
    step(n, base);

export const iso = (d: Date | number): string => new Date(d).toISOString();

/** A reservable item with its profiles (open to every role unless `allowed` says otherwise). */
export async function addReservable(
  app: FastifyInstance,
  itemId: string,
  profiles: { id: string; units: number; allowed?: Record<string, unknown>; priorityId?: string }[],
): Promise<void> {
  await app.db.insert(reservableItems).values({ id: itemId, name: `Item ${itemId}`, type: 'gpus' });
  await app.db.insert(reservableProfiles).values(
    profiles.map((p) => ({
      id: p.id,
      itemId,
      name: `Profile ${p.id}`,
      profile: p.id,
      units: p.units,
      allowed: p.allowed ?? { roles: [] },
      priorityId: p.priorityId ?? 'default',
    })),
  );
}

/** A plan written as is (its start may be in the past). */
export async function addPlan(
  app: FastifyInstance,
  values: { itemId: string; profileId: string; units: number; start: Date; end: Date },
): Promise<string> {
  const id = randomUUID();
  await app.db.insert(plannerEvents).values({
    id,
    itemType: 'gpus',
    itemId: values.itemId,
    subitemId: values.profileId,
    units: values.units,
    startAt: values.start,
    endAt: values.end,
  });
  return id;
}

export async function addRule(
  app: FastifyInstance,
  values: Partial<BookingRuleInsert> & Pick<BookingRuleInsert, 'allowed' | 'priority'>,
): Promise<void> {
  await app.db.insert(bookingPriorities).values({
    id: randomUUID(),
    name: 'test rule',
    ...values,
  });
}

/** A stopped desktop (no disk) that names a GPU profile. */
export function gpuDesktop(
  app: FastifyInstance,
  owner: UserRow,
  name: string,
  profileId: string | null,
  extra: Parameters<typeof addDesktop>[3] = {},
): Promise<string> {
  return addDesktop(app, owner, name, {
    hardware: { ...demoHardware(), reservables: { vgpus: profileId ? [profileId] : null } },
    ...extra,
  });
}

/** A deployment of `owner` with one desktop per user, all naming the profile. */
export async function gpuDeployment(
  app: FastifyInstance,
  owner: UserRow,
  users: UserRow[],
  profileId: string,
): Promise<{ id: string; desktops: string[] }> {
  const id = randomUUID();
  const hardware = { ...demoHardware(), reservables: { vgpus: [profileId] } };
  await app.db.insert(deployments).values({
    id,
    name: `Deployment ${id.slice(0, 8)}`,
    userId: owner.id,
    categoryId: owner.categoryId,
    groupId: owner.groupId,
    visible: true,
    createDict: { hardware },
  });
  const desktops: string[] = [];
  for (const u of users)
    desktops.push(await gpuDesktop(app, u, `Deployed ${id.slice(0, 8)}`, profileId, { tag: id }));
  return { id, desktops };
}

export interface BookingBody {
  element_id: string;
  element_type?: 'desktop' | 'deployment';
  start: Date | string;
  end: Date | string;
  title?: string;
  now?: boolean;
}

export function book(
  app: FastifyInstance,
  token: string,
  body: BookingBody,
): Promise<LightMyRequestResponse> {
  return injectWithToken(app, token, {
    method: 'POST',
    url: '/api/v3/booking/event',
    payload: {
      element_type: 'desktop',
      ...body,
      start: typeof body.start === 'string' ? body.start : iso(body.start),
      end: typeof body.end === 'string' ? body.end : iso(body.end),
    },
  });
}

/** PUT /booking/event/{id} with a form body, as the portal sends it. */
export function editBooking(
  app: FastifyInstance,
  token: string,
  id: string,
  fields: Record<string, string>,
): Promise<LightMyRequestResponse> {
  return injectWithToken(app, token, {
    method: 'PUT',
    url: `/api/v3/booking/event/${id}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** The status and description_code of an answer (null code on success). */
export const outcome = (res: LightMyRequestResponse) => ({
  status: res.statusCode,
  code: res.statusCode === 200 ? null : res.json<{ description_code: string }>().description_code,
});

export const range = (from: Date | number, to: Date | number) =>
  `startDate=${encodeURIComponent(iso(from))}&endDate=${encodeURIComponent(iso(to))}`;
