/**
 * Query-options factories of the planning screen (keys live here). The plan lists sit under the
 * resource's list prefix with the list-cache shape, so the live provider writes the plan socket
 * events straight into them.
 */
import { queryOptions } from '@tanstack/react-query';
import type { PlannerEvent, ReservableTypeParams } from '@/generated/types';
import { toWireDate } from '@/lib/dates';
import { request } from '@/providers/http-client';
import { listKeyPrefix } from '@/providers/live-provider';

export type ItemType = ReservableTypeParams['itemType'];

export interface PlanListCache {
  data: PlannerEvent[];
  total: number;
}

export const planningQueries = {
  types: () =>
    queryOptions({
      queryKey: ['reservables.types'],
      queryFn: async () => (await request('reservables.types')) ?? [],
    }),
  items: (itemType: ItemType) =>
    queryOptions({
      queryKey: ['reservables.items', itemType],
      queryFn: async () => (await request('reservables.items', { params: { itemType } })) ?? [],
    }),
  profiles: (itemType: ItemType, itemId: string) =>
    queryOptions({
      queryKey: ['reservables.enabled', itemType, itemId],
      queryFn: async () =>
        (await request('reservables.enabled', { params: { itemType, itemId } })) ?? [],
    }),
  /** The item's plans in the range. */
  plans: (itemId: string, range: { start: Date; end: Date }) =>
    queryOptions({
      queryKey: [...listKeyPrefix('planning'), itemId, range.start.valueOf(), range.end.valueOf()],
      queryFn: async (): Promise<PlanListCache> => {
        const data =
          (await request('planning.list', {
            params: { itemId, start: toWireDate(range.start), end: toWireDate(range.end) },
          })) ?? [];
        return { data, total: data.length };
      },
      placeholderData: (previous) => previous,
    }),
};
