/**
 * The bookings side of the demo: a reservable item "Demo GPU" (no special hardware: its profiles
 * are booked like GPU profiles, and the QEMU driver attaches nothing for them) with the profiles
 * 2Q (2 units) and 4Q (1 unit), both open to every role; a plan offering 2Q for the next 30 days;
 * the priority rules (everyone: no advance notice, at most 4 hours a booking, 5 bookings, 30 days
 * ahead; admins: a higher priority and longer bookings); and `advanced`'s desktop "GPU
 * workstation", which names 2Q and so starts only inside a booking.
 */
import { randomUUID } from 'node:crypto';
import {
  bookingPriorities,
  desktops,
  plannerEvents,
  reservableItems,
  reservableProfiles,
  type BookingRuleInsert,
} from '../platform/db/schema.ts';
import type { Executor } from '../platform/repository/entity-repository.ts';
import type { DesktopGuestProperties, DesktopHardware } from '../../../src/generated/types.ts';
import { role } from '../../../src/generated/policy.ts';

export const DEMO_GPU_ID = 'demo-gpu';
export const DEMO_PROFILE_2Q = 'DEMO-GPU-2Q';
export const DEMO_PROFILE_4Q = 'DEMO-GPU-4Q';
export const GPU_DESKTOP_NAME = 'GPU workstation';
const PLAN_DAYS = 30;
const DAY_MS = 24 * 3_600_000;
const HOUR_MS = 3_600_000;

/** Open to every role. */
const everyone = () => ({
  roles: [],
  categories: false as const,
  groups: false as const,
  users: false as const,
});

export const DEMO_BOOKING_RULES: BookingRuleInsert[] = [
  {
    id: 'default',
    ruleId: 'default',
    name: 'Default',
    description: 'Every user',
    allowed: everyone(),
    priority: 1,
    forbidTime: 0,
    maxTime: 240,
    maxItems: 5,
    maxBookingDays: 30,
  },
  {
    id: 'default-admins',
    ruleId: 'default',
    name: 'Administrators',
    description: 'Administrators book first and longer',
    allowed: { roles: [role.admin], categories: false, groups: false, users: false },
    priority: 10,
    forbidTime: 0,
    maxTime: 720,
    maxItems: 20,
    maxBookingDays: 30,
  },
];

export async function seedBookings(
  on: Executor,
  owners: { admin: string; advanced: { id: string; groupId: string } },
  desktop: {
    templateId: string;
    hardware: DesktopHardware;
    guestProperties: DesktopGuestProperties;
  },
  now = new Date(),
): Promise<void> {
  await on.insert(reservableItems).values({
    id: DEMO_GPU_ID,
    type: 'gpus',
    name: 'Demo GPU',
    brand: 'Demo',
    model: 'Shared accelerator',
    description: 'A reservable item without special hardware: booked like a GPU',
  });
  await on.insert(reservableProfiles).values([
    {
      id: DEMO_PROFILE_2Q,
      itemId: DEMO_GPU_ID,
      name: 'Demo GPU 2Q',
      description: 'Two desktops at once',
      profile: '2Q',
      units: 2,
      allowed: everyone(),
    },
    {
      id: DEMO_PROFILE_4Q,
      itemId: DEMO_GPU_ID,
      name: 'Demo GPU 4Q',
      description: 'One desktop at a time',
      profile: '4Q',
      units: 1,
      allowed: everyone(),
    },
  ]);
  await on.insert(bookingPriorities).values(DEMO_BOOKING_RULES);
  const start = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  await on.insert(plannerEvents).values({
    id: randomUUID(),
    itemType: 'gpus',
    itemId: DEMO_GPU_ID,
    subitemId: DEMO_PROFILE_2Q,
    units: 2,
    startAt: start,
    endAt: new Date(start.getTime() + PLAN_DAYS * DAY_MS),
    userId: owners.admin,
  });
  await on.insert(desktops).values({
    id: randomUUID(),
    userId: owners.advanced.id,
    categoryId: 'default',
    groupId: owners.advanced.groupId,
    name: GPU_DESKTOP_NAME,
    state: 'creating',
    description: 'Needs a booking of the Demo GPU 2Q profile to start',
    templateId: desktop.templateId,
    hardware: { ...desktop.hardware, reservables: { vgpus: [DEMO_PROFILE_2Q] } },
    guestProperties: desktop.guestProperties,
  });
}
