/**
 * Bookings of reservable profiles: a desktop whose reservables name a GPU profile (or a deployment
 * of such desktops) is booked for a time span and takes units of the profile inside the plans that
 * offer it (one unit per desktop).
 *
 * - Create and edit check the dates against the caller's priority rule (booking-rules.ts), then,
 *   in one transaction holding the booker's and the profile's locks (booking-store.ts): the number
 *   of bookings the booker holds, no overlap with the item's other bookings, and the units left
 *   over the whole span (booking-availability.ts). A booking over an overridable window cancels
 *   the lower-priority bookings whose units it takes. Parallel requests never book a unit twice.
 * - Start-now: the latest end a booking from now may have; `now: true` books from the server's now.
 * - The desktop rows carry what their cards show (`booking_id` of the booking in force, the next
 *   booking's start and end, the scheduled shutdown at its end), refreshed on every change here and
 *   by the scheduler when bookings begin and end (booking-scheduler.ts).
 * - The start gate: a desktop that needs a booking starts only inside one (its own or its
 *   deployment's) with a few minutes left; a desktop without a GPU profile costs no query.
 *
 * Socket events: bookingitem_* and booking_* to the booker and whoever hears about the item, the
 * desktops' own desktop_update, and a `msg` to the booker of a booking cancelled by somebody else.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { and, asc, eq, gt, inArray, lt, or, sql } from 'drizzle-orm';
import {
  bookingPriorities,
  bookings,
  bookingToWire,
  desktops,
  reservableItems,
  reservableProfiles,
  type BookingRow,
  type DesktopRow,
  type ReservableProfileRow,
} from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { sendMessage } from '../../platform/events/messages.ts';
import type {
  Booking,
  BookingCreate,
  BookingPriority,
  BookingRangeQuery,
  BookingReservableAvailable,
  BookingUpdate,
  DesktopHardware,
  ReservableAllowedProfile,
} from '../../../../src/generated/types.ts';
import {
  assertDeploymentRight,
  audienceOf,
  type DeploymentBookingState,
} from '../deployments/index.ts';
import { RUNNING_STATES } from '../quotas/index.ts';
import {
  evictionsFor,
  fitOf,
  segmentsOf,
  windowsOf,
  type BookingSpan,
  type Span,
} from './booking-availability.ts';
import {
  BOOKING_MIN_MS,
  START_MIN_LEFT_MS,
  START_NOW_MAX_MS,
  START_NOW_MIN_MS,
  checkDates,
  limitsFor,
  maxBookingDate,
  ruleError,
  stepFloor,
  wireDate,
  type BookingLimits,
  type BookingSubject,
} from './booking-rules.ts';
import {
  bookingSpan,
  bookingsOf,
  createSerialiser,
  desktopBookings,
  itemBookings,
  lockProfiles,
  lockUser,
  openBookings,
  planSpan,
  plansOf,
} from './booking-store.ts';
import { type EngineDesktop, profilesOf } from '../desktops/index.ts';

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

const RUNNING: readonly string[] = RUNNING_STATES;
const STOPPED: readonly string[] = ['stopped', 'failed'];

const precondition = (description: string, code: string, params?: Record<string, unknown>) =>
  new ApiError('precondition_required', description, code, params ?? null);

const parseDate = (text: string, field: string): Date => {
  const d = new Date(text);
  if (Number.isNaN(d.getTime()))
    throw ruleError('timeStep', `The ${field} date is not valid`, { field });
  return d;
};

const subjectOf = (auth: AuthContext): BookingSubject => ({
  userId: auth.userId,
  groupId: auth.groupId,
  categoryId: auth.categoryId,
  role: auth.role,
});

/** Whether a profile's allowed lists let the caller give it to a desktop (admins always). */
export function profileAllowed(auth: BookingSubject, allowed: unknown): boolean {
  if (auth.role === 'admin') return true;
  const lists = (allowed ?? {}) as Partial<Record<string, unknown>>;
  const dims: [string, string][] = [
    ['roles', auth.role],
    ['categories', auth.categoryId],
    ['groups', auth.groupId],
    ['users', auth.userId],
  ];
  return dims.some(([key, value]) => {
    const list = lists[key];
    return Array.isArray(list) && (list.length === 0 || list.includes(value));
  });
}

export interface BookingServiceOptions {
  /** asks the scheduler to look again (a booking begins or ends at another time now) */
  onChange?: () => void;
}

export type BookingService = ReturnType<typeof createBookingService>;

export function createBookingService(app: FastifyInstance, options: BookingServiceOptions = {}) {
  const { db } = app;
  const serialised = createSerialiser();
  const changed = () => options.onChange?.();

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

  const toWire = (row: BookingRow, editable: boolean): Booking => ({
    ...bookingToWire(row),
    event_type: 'event',
    editable,
  });

  const audienceOfBooking = async (row: BookingRow): Promise<string[]> => {
    const item = await itemOf(row.itemType, row.itemId);
    return [...new Set([row.userId, ...(item?.audience ?? [])])];
  };

  const publishBooking = async (row: BookingRow, change: 'created' | 'updated') => {
    const payload = toWire(row, row.endAt.getTime() > Date.now());
    for (const ownerId of await audienceOfBooking(row)) {
      if (change === 'created') {
        app.events.publish({ name: 'bookings.created', payload, ownerId });
        app.events.publish({ name: 'bookings.bookingAdded', payload, ownerId });
      } else {
        app.events.publish({ name: 'bookings.updated', payload, ownerId });
        app.events.publish({ name: 'bookings.bookingUpdated', payload, ownerId });
      }
    }
  };

  const publishDeleted = async (row: BookingRow) => {
    const payload = { id: row.id, version: row.version + 1 };
    for (const ownerId of await audienceOfBooking(row)) {
      app.events.publish({ name: 'bookings.deleted', payload, ownerId });
      app.events.publish({ name: 'bookings.bookingDeleted', payload, ownerId });
    }
  };

  /**
   * Writes what a desktop's card shows about its bookings at `now`: the booking in force, the
   * next one's (or that one's) start and end, the scheduled shutdown at its end. Only changes are
   * written (each write is a desktop_update).
   */
  const refreshDesktop = async (row: DesktopRow, now = new Date()): Promise<void> => {
    const profiles = profilesOf(row.hardware);
    const rows = profiles.length > 0 ? await desktopBookings(db, row, profiles, now) : [];
    const current = rows.find((b) => b.startAt.getTime() <= now.getTime());
    const next = current ?? rows[0];
    const shutdown: string | false = current ? wireDate(current.endAt) : false;
    const scheduled = row.scheduled as { shutdown?: unknown };
    const patch = {
      bookingId: current?.id ?? null,
      nextBookingStart: next?.startAt ?? null,
      nextBookingEnd: next?.endAt ?? null,
      ...(profiles.length > 0 || scheduled.shutdown !== false
        ? { scheduled: { ...row.scheduled, shutdown } }
        : {}),
    };
    const same =
      (row.bookingId ?? null) === patch.bookingId &&
      (row.nextBookingStart?.getTime() ?? null) === (patch.nextBookingStart?.getTime() ?? null) &&
      (row.nextBookingEnd?.getTime() ?? null) === (patch.nextBookingEnd?.getTime() ?? null) &&
      (patch.scheduled === undefined || scheduled.shutdown === shutdown);
    if (!same) await app.desktops.update(row.id, patch);
  };

  const refreshItem = async (type: ItemType, id: string, now = new Date()): Promise<void> => {
    const item = await itemOf(type, id);
    for (const d of item?.desktops ?? []) await refreshDesktop(d, now);
  };

  /**
   * Announces bookings that were deleted: the socket events, the desktops' cards, and a message to
   * the booker when somebody else cancelled it (`reason` says why).
   */
  const cancelled = async (rows: readonly BookingRow[], reason: string | null) => {
    for (const row of rows) {
      await publishDeleted(row);
      if (reason)
        sendMessage(app, row.userId, {
          type: 'warning',
          msg_code: 'booking-cancelled',
          params: {
            name: row.title,
            date: wireDate(row.startAt),
            reason,
          },
        });
    }
    const items = new Map(rows.map((r) => [`${r.itemType}:${r.itemId}`, r]));
    for (const r of items.values()) await refreshItem(r.itemType, r.itemId);
    if (rows.length > 0) changed();
  };

  const deleteRows = async (on: Executor, ids: readonly string[]): Promise<BookingRow[]> =>
    ids.length === 0
      ? []
      : on
          .delete(bookings)
          .where(inArray(bookings.id, [...ids]))
          .returning();

  /**
   * Where a booking of `item` over `span` may go, inside the transaction that holds the profile:
   * not over another of the item's bookings, inside the plans, with the units left (answers the
   * lower-priority bookings it takes the units of).
   */
  const place = async (
    tx: Executor,
    item: BookedItem,
    profileId: string,
    span: Span,
    priority: number,
    exceptId?: string,
  ): Promise<BookingSpan[]> => {
    const update = exceptId !== undefined;
    const mine = await itemBookings(tx, item, span, exceptId);
    if (mine.length > 0)
      throw ruleError(update ? 'updateNoOverlap' : 'noOverlap', 'It overlaps another booking', {
        id: mine[0]?.id,
      });
    const plans = (await plansOf(tx, profileId, span)).map(planSpan);
    const taken = (await bookingsOf(tx, profileId, span, exceptId)).map(bookingSpan);
    const fit = fitOf(segmentsOf(span, plans, taken, { priority }), item.units);
    if (fit === 'outside')
      throw ruleError(
        update ? 'updateFitsPlans' : 'fitsPlans',
        'The booking does not fit the available time',
      );
    if (fit === 'full')
      throw ruleError(update ? 'updateNoOverlap' : 'noOverlap', 'No unit is left at that time', {
        units: item.units,
      });
    return fit === 'override' ? evictionsFor(span, plans, taken, item.units, priority) : [];
  };

  /**
   * The latest end of a booking from `now` for a profile: the free run of units from now (an own
   * booking or a full segment ends it), cut by the rule's length and latest date and by the
   * start-now cap, on a time step.
   */
  const startNowLimit = async (
    subject: BookingSubject,
    profile: ReservableProfileRow,
    item: Pick<BookedItem, 'id' | 'units'> | null,
    now: Date,
  ): Promise<Date> => {
    const limits = await limitsOf(subject, profile);
    if (limits.maxTime === 0)
      throw ruleError('maxDuration', 'Bookings of this profile are not allowed to you', {
        max_time: 0,
      });
    const range = { start: now.getTime(), end: now.getTime() + START_NOW_MAX_MS };
    const plans = (await plansOf(db, profile.id, range)).map(planSpan);
    const taken = (await bookingsOf(db, profile.id, range)).map(bookingSpan);
    const segments = segmentsOf(range, plans, taken, {
      priority: limits.priority,
      ownItem: item?.id,
    });
    if ((segments[0]?.offered ?? 0) === 0)
      throw precondition('No plan offers the profile now', 'current_plan_doesnt_match', {
        profile: profile.id,
      });
    const units = item?.units ?? 1;
    let runEnd = range.start;
    for (const s of segments) {
      if (s.offered - s.kept < units || s.own > 0) break;
      runEnd = s.end;
    }
    const notEnough = () =>
      precondition('There is not enough free time to start now', 'not_enough_time_to_start', {
        profile: profile.id,
      });
    if (runEnd - range.start < START_NOW_MIN_MS) throw notEnough();
    const latest = maxBookingDate(limits, now);
    const bounds = [runEnd, range.end];
    if (limits.maxTime !== null) bounds.push(range.start + limits.maxTime * 60_000);
    if (latest) bounds.push(latest.getTime());
    const limit = stepFloor(Math.min(...bounds));
    if (limit - range.start < BOOKING_MIN_MS) throw notEnough();
    return new Date(limit);
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

  const bookingFor = async (auth: AuthContext, id: string) => {
    const row = (await db.select().from(bookings).where(eq(bookings.id, id)).limit(1))[0];
    if (!row) throw new ApiError('not_found', 'Booking not found', 'not_found');
    if (row.userId !== auth.userId && auth.role !== 'admin')
      await itemFor(auth, row.itemType, row.itemId);
    return row;
  };

  return {
    profilesOf,
    itemOf,
    refreshItem,
    refreshDesktop,
    cancelled,
    allowedProfiles,
    profilesFor,

    /** GET /domains/allowed/reservables: None (No GPU), then the profiles the caller may use. */
    async allowed(auth: AuthContext): Promise<{ vgpus: ReservableAllowedProfile[] }> {
      const editable = auth.role === 'admin';
      return {
        vgpus: [
          { id: 'None', name: 'No GPU', description: null, allowed: true, editable },
          ...(await allowedProfiles(subjectOf(auth))).map((p) => ({
            id: p.id,
            name: p.name,
            description: p.description,
            allowed: true,
            editable,
          })),
        ],
      };
    },

    /** GET /bookings/user/{itemId}/{itemType}: the item's bookings, then its availability. */
    async listItem(
      auth: AuthContext,
      type: ItemType,
      id: string,
      query: BookingRangeQuery,
    ): Promise<Booking[]> {
      const item = await itemFor(auth, type, id);
      const range = {
        start: parseDate(query.startDate, 'start').getTime(),
        end: parseDate(query.endDate, 'end').getTime(),
      };
      const what = query.returnType ?? 'all';
      const now = Date.now();
      const profile = item.profileId ? await profileById(item.profileId) : undefined;
      const windows = what !== 'event' && profile?.enabled === true && range.end > range.start;
      // With windows, the profile's bookings are read once: the item's own are among them.
      const [limits, plans, taken] = windows
        ? await Promise.all([
            limitsOf(subjectOf(auth), profile),
            plansOf(db, profile.id, range),
            bookingsOf(db, profile.id, range),
          ])
        : [null, [], null];
      const out: Booking[] = [];
      if (what !== 'availability') {
        const own = taken
          ? taken.filter((r) => r.itemType === item.type && r.itemId === item.id)
          : await itemBookings(db, item, range);
        for (const row of own) out.push(toWire(row, row.endAt.getTime() > now));
      }
      if (limits && taken)
        for (const w of windowsOf(range, plans.map(planSpan), taken.map(bookingSpan), {
          units: item.units,
          priority: limits.priority,
          ownItem: item.id,
        }))
          out.push({
            event_type: w.type,
            start: wireDate(new Date(w.start)),
            end: wireDate(new Date(w.end)),
            units: w.units,
          });
      return out;
    },

    /**
     * GET /bookings/user: the bookings the caller made and those of the caller's desktops and of
     * the deployments the caller has a desktop in, overlapping the range.
     */
    async listMine(auth: AuthContext, query: BookingRangeQuery): Promise<Booking[]> {
      const range = {
        start: parseDate(query.startDate, 'start'),
        end: parseDate(query.endDate, 'end'),
      };
      const mine = await db
        .select({ id: desktops.id, tag: desktops.tag })
        .from(desktops)
        .where(eq(desktops.userId, auth.userId));
      const desktopIds = mine.map((d) => d.id);
      const deploymentIds = [...new Set(mine.flatMap((d) => (d.tag ? [d.tag] : [])))];
      const rows = await db
        .select()
        .from(bookings)
        .where(
          and(
            lt(bookings.startAt, range.end),
            gt(bookings.endAt, range.start),
            or(
              eq(bookings.userId, auth.userId),
              desktopIds.length > 0
                ? and(eq(bookings.itemType, 'desktop'), inArray(bookings.itemId, desktopIds))
                : undefined,
              deploymentIds.length > 0
                ? and(eq(bookings.itemType, 'deployment'), inArray(bookings.itemId, deploymentIds))
                : undefined,
            ),
          ),
        )
        .orderBy(asc(bookings.startAt));
      const now = Date.now();
      const own = new Set(desktopIds);
      return rows.map((row) =>
        toWire(
          row,
          row.endAt.getTime() > now &&
            (row.userId === auth.userId ||
              auth.role === 'admin' ||
              (row.itemType === 'desktop' && own.has(row.itemId))),
        ),
      );
    },

    /** GET /bookings/priority/{type}/{id}: the caller's limits for the item's profile. */
    async priority(auth: AuthContext, type: ItemType, id: string): Promise<BookingPriority> {
      const item = await itemFor(auth, type, id);
      const profile = await bookableProfile(item);
      const limits = await limitsOf(subjectOf(auth), profile);
      const latest = maxBookingDate(limits, new Date());
      return {
        priority: { [profile.id]: limits.priority },
        forbid_time: limits.forbidTime,
        max_time: limits.maxTime,
        max_items: limits.maxItems,
        name: item.name,
        max_booking_date: latest ? wireDate(latest) : null,
      };
    },

    /** POST /booking/event. */
    async create(auth: AuthContext, body: BookingCreate): Promise<Booking> {
      const now = new Date();
      const item = await itemFor(auth, body.element_type, body.element_id);
      const profile = await bookableProfile(item);
      const startsNow = body.now === true;
      if (startsNow && item.type === 'deployment')
        throw new ApiError(
          'bad_request',
          'Only a desktop can be booked from now',
          'booking_now_desktop_only',
        );
      const start = startsNow ? now : parseDate(body.start, 'start');
      const end = parseDate(body.end, 'end');
      const limits = await limitsOf(subjectOf(auth), profile);
      checkDates({ start, end }, limits, {
        now,
        startsNow,
        startUnchanged: false,
        update: false,
      });
      const span = { start: start.getTime(), end: end.getTime() };
      const { row, evicted } = await serialised([profile.id], () =>
        db.transaction(async (tx) => {
          await lockUser(tx, auth.userId);
          await lockProfiles(tx, [profile.id]);
          if (
            limits.maxItems !== null &&
            (await openBookings(tx, auth.userId, now)) >= limits.maxItems
          )
            throw ruleError('maxItems', 'The maximum number of bookings has been reached', {
              max_items: limits.maxItems,
            });
          const evict = await place(tx, item, profile.id, span, limits.priority);
          const removed = await deleteRows(
            tx,
            evict.map((e) => e.id),
          );
          const [inserted] = await tx
            .insert(bookings)
            .values({
              id: randomUUID(),
              itemId: item.id,
              itemType: item.type,
              title: body.title?.trim() || item.name,
              startAt: start,
              endAt: end,
              units: item.units,
              userId: auth.userId,
              reservables: { vgpus: [profile.id] },
              profileId: profile.id,
              priority: limits.priority,
              phase: start.getTime() <= now.getTime() ? 'active' : 'scheduled',
            })
            .returning();
          if (!inserted) throw new Error('booking insert returned no row');
          return { row: inserted, evicted: removed };
        }),
      );
      await cancelled(evicted, 'overridden');
      await publishBooking(row, 'created');
      await refreshItem(item.type, item.id);
      changed();
      return toWire(row, true);
    },

    /** PUT /booking/event/{id}: new dates (a booking in progress keeps its start) and title. */
    async update(auth: AuthContext, id: string, body: BookingUpdate): Promise<Booking> {
      const now = new Date();
      const current = await bookingFor(auth, id);
      // The form may repeat what it edits; it must be this booking and its item.
      const named = {
        event_id: current.id,
        element_id: current.itemId,
        element_type: current.itemType,
      };
      for (const [field, value] of Object.entries(named))
        if (
          body[field as keyof typeof named] !== undefined &&
          body[field as keyof typeof named] !== value
        )
          throw new ApiError('bad_request', `The form names another ${field}`, 'bad_request', {
            field,
          });
      if (current.endAt.getTime() <= now.getTime())
        throw precondition('The booking has ended', 'booking_not_editable', { id });
      const item = await itemOf(current.itemType, current.itemId);
      if (!item) throw new ApiError('not_found', 'Not found', 'not_found');
      const profile = await profileById(current.profileId);
      if (!profile) throw new ApiError('not_found', 'Not found', 'not_found');
      const start = parseDate(body.start, 'start');
      const end = parseDate(body.end, 'end');
      const booker =
        current.userId === auth.userId ? subjectOf(auth) : await subjectById(current.userId);
      const limits = await limitsOf(booker, profile);
      checkDates({ start, end }, limits, {
        now,
        startsNow: false,
        startUnchanged: start.getTime() === current.startAt.getTime(),
        update: true,
      });
      const span = { start: start.getTime(), end: end.getTime() };
      const { row, evicted } = await serialised([profile.id], () =>
        db.transaction(async (tx) => {
          await lockUser(tx, current.userId);
          await lockProfiles(tx, [profile.id]);
          const evict = await place(tx, item, profile.id, span, current.priority, current.id);
          const removed = await deleteRows(
            tx,
            evict.map((e) => e.id),
          );
          const [updated] = await tx
            .update(bookings)
            .set({
              startAt: start,
              endAt: end,
              ...(body.title !== undefined ? { title: body.title.trim() || item.name } : {}),
              phase: start.getTime() <= now.getTime() ? 'active' : 'scheduled',
              ...(end.getTime() !== current.endAt.getTime() ? { notices: 0 } : {}),
              version: sql`${bookings.version} + 1`,
            })
            .where(eq(bookings.id, current.id))
            .returning();
          if (!updated) throw new ApiError('not_found', 'Booking not found', 'not_found');
          return { row: updated, evicted: removed };
        }),
      );
      await cancelled(evicted, 'overridden');
      await publishBooking(row, 'updated');
      await refreshItem(row.itemType, row.itemId);
      changed();
      return toWire(row, true);
    },

    /** DELETE /booking/event/{id}: a booking in progress needs its desktops stopped. */
    async remove(auth: AuthContext, id: string): Promise<void> {
      const row = await bookingFor(auth, id);
      const now = Date.now();
      if (row.startAt.getTime() <= now && row.endAt.getTime() > now) {
        const item = await itemOf(row.itemType, row.itemId);
        if (item?.desktops.some((d) => !STOPPED.includes(d.state)))
          throw precondition(
            'The booking can not be deleted while its desktop runs',
            'booking_delete_desktop_running',
            { id },
          );
      }
      const removed = await deleteRows(db, [row.id]);
      await cancelled(removed, null);
    },

    /** GET /booking/max_booking_date/{id}: the latest end of a start-now booking of the desktop. */
    async maxBookingDate(
      auth: AuthContext,
      desktopId: string,
    ): Promise<{ max_booking_date: string }> {
      const item = await itemFor(auth, 'desktop', desktopId);
      const profile = await bookableProfile(item);
      return {
        max_booking_date: wireDate(await startNowLimit(subjectOf(auth), profile, item, new Date())),
      };
    },

    /** GET /booking/reservables_available: the profiles the caller may book from now on. */
    async reservablesAvailable(
      auth: AuthContext,
    ): Promise<{ reservables_available: BookingReservableAvailable[] }> {
      const now = new Date();
      const available: BookingReservableAvailable[] = [];
      for (const profile of await allowedProfiles(subjectOf(auth))) {
        const latest = await startNowLimit(subjectOf(auth), profile, null, now).catch(
          (err: unknown) => {
            if (err instanceof ApiError) return null;
            throw err;
          },
        );
        if (latest)
          available.push({
            id: profile.id,
            name: profile.name,
            description: profile.description,
            max_booking_date: wireDate(latest),
          });
      }
      if (available.length === 0)
        throw precondition('No GPU profile can be booked now', 'no_available_profile');
      return { reservables_available: available };
    },

    /**
     * Refuses to start a desktop that needs a booking outside one (its own or its deployment's),
     * or with less than the minimum left of it. Desktops without a GPU profile pass at once.
     */
    async gate(desktop: EngineDesktop): Promise<void> {
      const profiles = profilesOf(desktop.hardware);
      if (profiles.length === 0) return;
      const row = await app.desktops.table.get(desktop.id);
      if (!row) return;
      const now = new Date();
      const rows = await desktopBookings(db, row, profiles, now);
      const current = rows.find((b) => b.startAt.getTime() <= now.getTime());
      if (current) {
        if (current.endAt.getTime() - now.getTime() < START_MIN_LEFT_MS)
          throw precondition(
            'Too little of the booking is left to start',
            'not_enough_time_to_start',
            { end: wireDate(current.endAt) },
          );
        if (row.bookingId !== current.id) await refreshDesktop(row, now);
        return;
      }
      const next = rows[0];
      if (next)
        throw precondition('The desktop is not booked until later', 'desktop_not_booked_until', {
          start: wireDate(next.startAt),
        });
      if (row.tag) throw precondition('The deployment needs a booking', 'needs_deployment_booking');
      throw precondition('The desktop needs a booking to start', 'desktop_not_booked');
    },

    /** A desktop's profile changed: its bookings that have not ended no longer apply. */
    async profileChanged(desktopId: string): Promise<void> {
      const removed = await db
        .delete(bookings)
        .where(
          and(
            eq(bookings.itemType, 'desktop'),
            eq(bookings.itemId, desktopId),
            gt(bookings.endAt, new Date()),
          ),
        )
        .returning();
      await cancelled(removed, null);
      await refreshItem('desktop', desktopId);
    },

    /** The item is gone: its bookings go too. */
    async itemGone(type: ItemType, id: string): Promise<void> {
      if (await itemOf(type, id)) return;
      const removed = await db
        .delete(bookings)
        .where(and(eq(bookings.itemType, type), eq(bookings.itemId, id)))
        .returning();
      for (const row of removed) await publishDeleted(row);
      if (removed.length > 0) changed();
    },

    /** The desktops of an item that run now and need a booking of its profile. */
    runningDesktops(item: BookedItem): DesktopRow[] {
      return item.desktops.filter(
        (d) =>
          RUNNING.includes(d.state) &&
          item.profileId !== null &&
          profilesOf(d.hardware).includes(item.profileId),
      );
    },

    /**
     * What deployment cards show about their bookings at `now`: whether the deployment needs one
     * (its desktops' hardware names a GPU profile), the booking in force and the next one's (or
     * that one's) start and end.
     */
    async deploymentBookings(
      rows: readonly { id: string; createDict: { hardware?: DesktopHardware } }[],
      now = new Date(),
    ): Promise<Map<string, DeploymentBookingState>> {
      const ids = rows.map((r) => r.id);
      const found =
        ids.length === 0
          ? []
          : await db
              .select()
              .from(bookings)
              .where(
                and(
                  eq(bookings.itemType, 'deployment'),
                  inArray(bookings.itemId, ids),
                  gt(bookings.endAt, now),
                ),
              )
              .orderBy(asc(bookings.startAt));
      const states = new Map<string, DeploymentBookingState>();
      for (const row of rows) {
        const own = found.filter((b) => b.itemId === row.id);
        const current = own.find((b) => b.startAt.getTime() <= now.getTime());
        const next = current ?? own[0];
        states.set(row.id, {
          needs_booking: profilesOf(row.createDict.hardware).length > 0,
          booking_id: current?.id ?? false,
          next_booking_start: next ? wireDate(next.startAt) : null,
          next_booking_end: next ? wireDate(next.endAt) : null,
        });
      }
      return states;
    },

    /** Whether a booking (its own or its deployment's) covers the desktop at the instant. */
    async coveredAt(desktop: DesktopRow, at: Date): Promise<boolean> {
      const rows = await desktopBookings(db, desktop, profilesOf(desktop.hardware), at, 1);
      return rows.some((b) => b.startAt.getTime() <= at.getTime());
    },
  };

  async function subjectById(userId: string): Promise<BookingSubject> {
    const user = await app.users.byId(userId);
    if (!user) throw new ApiError('not_found', 'Not found', 'not_found');
    return { userId: user.id, groupId: user.groupId, categoryId: user.categoryId, role: user.role };
  }
}
