/**
 * The first records of a long list, drawn while the whole list loads: a resource whose schema
 * sets `x-ui.list.preview` reads its first N records (the list operation's `limit` query, in the
 * list's order) apart from the whole list, when no list of it is in the cache yet. The read is
 * the one the sign-in already started (`prefetchLanding`) when the page is the landing page; when
 * its answer has already come, the page's first render draws it.
 */
import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { resourceOf } from '@/generated/resources';
import { previewQuery } from '@/lib/list-preview';
import { requestOperation, takeSettledPrefetch } from '@/providers/http-client';
import { listKeyPrefix, previewKey } from '@/providers/live-cache';

/**
 * The first records of `resource`'s list, or null: no preview in its schema, a list already in
 * the cache when the page opened, the preview not answered (yet) or failed (the page then waits
 * for the whole list as before).
 */
export function useListPreview<T>(resource: string): T[] | null {
  const queryClient = useQueryClient();
  const count = resourceOf(resource)?.meta.list?.preview;
  // Decided once per page: a list read before (a visit back) is drawn from the cache at once.
  const [wanted] = useState(
    () =>
      !!count &&
      queryClient
        .getQueriesData({ queryKey: listKeyPrefix(resource) })
        .every(([, data]) => data === undefined),
  );
  const call = { params: {}, query: previewQuery(count ?? 1) };
  const { data } = useQuery({
    queryKey: previewKey(resource),
    queryFn: () => requestOperation(`${resource}.list`, call),
    // Already come (asked ahead at the sign-in): drawn in the page's first render.
    initialData: () => (wanted ? takeSettledPrefetch(`${resource}.list`, call)?.data : undefined),
    enabled: wanted,
    retry: false,
    staleTime: Infinity,
    gcTime: 0,
  });
  return wanted && Array.isArray(data) ? (data as T[]) : null;
}
