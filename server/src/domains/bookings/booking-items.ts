/**
 * What a booking is for (a desktop, or a deployment and its desktops), the item the caller may
 * book, the reservable profile it names, the caller's limits on it, and the profiles the caller may
 * give a desktop.
 */
import { and, asc, eq } from 'drizzle-orm';
import {
  bookingPriorities,
  reservableItems,
  reservableProfiles,
  type BookingRow,
  type DesktopRow,
  type ReservableProfileRow,
} from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { listsAllow } from '../../platform/lib/allowed-lists.ts';
import { assertDeploymentRight, audienceOf } from '../deployments/index.ts';
import { profilesOf } from '../desktops/index.ts';
import type { BookingDeps } from './booking-deps.ts';
import { limitsFor, ruleError, type BookingLimits, type BookingSubject } from './booking-rules.ts';

export type ItemType = BookingRow['itemType'];

/** What a booking is for: a desktop (1 unit) or a deployment (1 unit per desktop). */
export interface BookedItem {
  type: ItemType;
  id: string;
  name: string;
  /** the GPU profile it names, null without one */
  profileId: string | null;
  units: number;
  /** the desktops that run under its bookings */
  desktops: DesktopRow[];
  /** the users who hear about its bookings */
  audience: string[];
}

export const precondition = (description: string, code: string, params?: Record<string, unknown>) =>
  new ApiError('precondition_required', description, code, params ?? null);

export const parseDate = (text: string, field: string): Date => {
  const d = new Date(text);
  if (Number.isNaN(d.getTime()))
    throw ruleError('timeStep', `The ${field} date is not valid`, { field });
  return d;
};

export const subjectOf = (auth: AuthContext): BookingSubject => ({
  userId: auth.userId,
  groupId: auth.groupId,
  categoryId: auth.categoryId,
  role: auth.role,
});

/** Whether a profile's allowed lists let the caller give it to a desktop (admins always). */
export const profileAllowed = (auth: BookingSubject, allowed: unknown): boolean =>
  listsAllow(auth, allowed);

export type BookingItems = ReturnType<typeof bookingItems>;

export function bookingItems({ app }: Pick<BookingDeps, 'app'>) {
  const { db } = app;

  const profileById = async (
    id: string,
    on: Executor = db,
  ): Promise<ReservableProfileRow | undefined> =>
    (await on.select().from(reservableProfiles).where(eq(reservableProfiles.id, id)).limit(1))[0];

  const limitsOf = async (
    subject: BookingSubject,
    profile: ReservableProfileRow,
  ): Promise<BookingLimits> =>
    limitsFor(await db.select().from(bookingPriorities), profile.priorityId, subject);

  /** A desktop or deployment as a booked item, whoever asks (undefined when it is gone). */
  const itemOf = async (type: ItemType, id: string): Promise<BookedItem | undefined> => {
    if (type === 'desktop') {
      const row = await app.desktops.table.get(id);
      if (!row) return undefined;
      return {
        type,
        id,
        name: row.name,
        profileId: profilesOf(row.hardware)[0] ?? null,
        units: 1,
        desktops: [row],
        audience: [row.userId],
      };
    }
    const row = await app.deployments.get(id);
    if (!row) return undefined;
    const rows = (await app.deployments.desktopsOf(id)).map((d) => d.row);
    const profileId =
      profilesOf(row.createDict.hardware)[0] ??
      rows.map((d) => profilesOf(d.hardware)[0]).find((p) => p !== undefined) ??
      null;
    return {
      type,
      id,
      name: row.name,
      profileId,
      units: Math.max(1, rows.length),
      desktops: rows,
      audience: audienceOf(row),
    };
  };

  /**
   * The item the caller may book: a desktop the caller manages (desktop rules), a deployment the
   * caller manages (deployment rules). 404 when unknown, 403 when not the caller's.
   */
  const itemFor = async (auth: AuthContext, type: ItemType, id: string): Promise<BookedItem> => {
    if (type === 'desktop') await app.desktopService.desktopFor(auth, id);
    else {
      const row = await app.deployments.get(id);
      const owner = row ? await app.users.byId(row.userId) : undefined;
      assertDeploymentRight(
        auth,
        row ? { row, ownerRole: owner?.role ?? null } : undefined,
        'manage',
      );
    }
    const item = await itemOf(type, id);
    if (!item) throw new ApiError('not_found', 'Not found', 'not_found');
    return item;
  };

  const bookableProfile = async (item: BookedItem): Promise<ReservableProfileRow> => {
    const profile = item.profileId ? await profileById(item.profileId) : undefined;
    if (!profile?.enabled)
      throw precondition(`The ${item.type} has no reservable profile`, 'no_reservables', {
        id: item.id,
      });
    return profile;
  };

  /** The enabled profiles of enabled items, by name, each with whether the caller may use it. */
  const profilesFor = async (
    auth: BookingSubject,
  ): Promise<(ReservableProfileRow & { usable: boolean })[]> => {
    const rows = await db
      .select({ profile: reservableProfiles })
      .from(reservableProfiles)
      .innerJoin(reservableItems, eq(reservableItems.id, reservableProfiles.itemId))
      .where(and(eq(reservableProfiles.enabled, true), eq(reservableItems.enabled, true)))
      .orderBy(asc(reservableProfiles.name), asc(reservableProfiles.id));
    return rows.map((r) => ({ ...r.profile, usable: profileAllowed(auth, r.profile.allowed) }));
  };

  /** The enabled profiles (of enabled items) the caller may give a desktop, by name. */
  const allowedProfiles = async (auth: BookingSubject): Promise<ReservableProfileRow[]> =>
    (await profilesFor(auth)).filter((p) => p.usable);

  const subjectById = async (userId: string): Promise<BookingSubject> => {
    const user = await app.users.byId(userId);
    if (!user) throw new ApiError('not_found', 'Not found', 'not_found');
    return { userId: user.id, groupId: user.groupId, categoryId: user.categoryId, role: user.role };
  };

  return {
    profileById,
    limitsOf,
    itemOf,
    itemFor,
    bookableProfile,
    profilesFor,
    allowedProfiles,
    subjectById,
  };
}
