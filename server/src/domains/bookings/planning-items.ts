/**
 * What the planning page lists: the kinds of reservable items, the items with what they offer now
 * (enabled profiles, started desktops, units left), and an item's enabled profiles.
 */
import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import {
  bookings,
  desktops,
  plannerEvents,
  reservableItems,
  reservableProfiles,
  reservableToWire,
  type DesktopRow,
} from '../../platform/db/schema.ts';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import type {
  Reservable,
  ReservableItemType,
  ReservableSubitem,
} from '../../../../src/generated/types.ts';
import { RUNNING_STATES } from '../quotas/index.ts';
import type { PlanChanges } from './plan-changes.ts';

const RUNNING = [...RUNNING_STATES] as DesktopRow['state'][];

export function planningItems(app: FastifyInstance, { itemById }: Pick<PlanChanges, 'itemById'>) {
  const { db } = app;

  return {
    /** GET /admin/reservables: the kinds of reservable items. */
    types: (): ReservableItemType[] => ['gpus'],

    /** GET /admin/reservables/{itemType}: the items with what they offer now. */
    async items(type: ReservableItemType): Promise<Reservable[]> {
      const items = await db
        .select()
        .from(reservableItems)
        .where(eq(reservableItems.type, type))
        .orderBy(asc(reservableItems.name));
      if (items.length === 0) return [];
      const ids = items.map((i) => i.id);
      const now = new Date();
      const profiles = await db
        .select()
        .from(reservableProfiles)
        .where(inArray(reservableProfiles.itemId, ids));
      const plans = await db
        .select()
        .from(plannerEvents)
        .where(
          and(
            inArray(plannerEvents.itemId, ids),
            sql`${plannerEvents.startAt} <= ${now}`,
            gt(plannerEvents.endAt, now),
          ),
        );
      const profileIds = profiles.map((p) => p.id);
      const booked =
        profileIds.length === 0
          ? []
          : await db
              .select({
                profileId: bookings.profileId,
                units: sql<number>`sum(${bookings.units})::int`,
              })
              .from(bookings)
              .where(
                and(
                  inArray(bookings.profileId, profileIds),
                  sql`${bookings.startAt} <= ${now}`,
                  gt(bookings.endAt, now),
                ),
              )
              .groupBy(bookings.profileId);
      const started =
        profileIds.length === 0
          ? []
          : await db
              .select({ hardware: desktops.hardware })
              .from(desktops)
              .where(
                and(
                  inArray(desktops.state, RUNNING),
                  sql`${desktops.hardware} -> 'reservables' -> 'vgpus' ?| array[${sql.join(
                    profileIds.map((p) => sql`${p}`),
                    sql`, `,
                  )}]::text[]`,
                ),
              );
      return items.map((item) => {
        const own = profiles.filter((p) => p.itemId === item.id);
        const ownIds = new Set(own.map((p) => p.id));
        const current = plans.filter((p) => p.itemId === item.id);
        const offered = current.reduce((n, p) => n + p.units, 0);
        const taken = booked
          .filter((b) => current.some((p) => p.subitemId === b.profileId))
          .reduce((n, b) => n + Number(b.units), 0);
        return {
          ...reservableToWire(item),
          profiles_enabled: own.filter((p) => p.enabled).map((p) => p.id),
          desktops_started: started.filter((d) =>
            (d.hardware.reservables?.vgpus ?? []).some((v) => ownIds.has(v)),
          ).length,
          available_units: Math.max(0, offered - taken),
          plans: {
            current: current.length,
            active: current.length > 0,
            profile: current[0]?.subitemId ?? null,
          },
        };
      });
    },

    /** GET /admin/reservables/enabled/{itemType}/{itemId}: the item's enabled profiles. */
    async enabled(type: ReservableItemType, itemId: string): Promise<ReservableSubitem[]> {
      const item = await itemById(itemId);
      if (!item || item.type !== type)
        throw new ApiError('not_found', 'Item not found', 'not_found');
      const rows = await db
        .select()
        .from(reservableProfiles)
        .where(and(eq(reservableProfiles.itemId, itemId), eq(reservableProfiles.enabled, true)))
        .orderBy(asc(reservableProfiles.name));
      return rows.map((p) => ({
        id: p.id,
        name: p.name,
        description: p.description,
        profile: p.profile,
        units: p.units,
      }));
    },
  };
}
