/** The application's single QueryClient (refine uses it; the live provider patches it). */
import { QueryClient } from '@tanstack/react-query';

import { resources } from '@/generated/resources';
import { keepNewerRecords, listKeyPrefix } from '@/providers/live-provider';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { refetchOnWindowFocus: false, retry: false, staleTime: 30_000 },
    mutations: { retry: false },
  },
});
// Lists the live provider patches keep unchanged records as the same objects (structural sharing
// would walk 5,000 desktops on every socket event for nothing), and a refetch answer does not undo
// an event that arrived while it was in flight.
for (const resource of resources)
  if (resource.meta.live && 'patch' in resource.meta.live && resource.meta.live.patch)
    queryClient.setQueryDefaults(listKeyPrefix(resource.name), {
      structuralSharing: keepNewerRecords,
    });
