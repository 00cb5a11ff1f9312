/** The application's single QueryClient (refine uses it; the live provider patches it). */
import { QueryClient } from '@tanstack/react-query';

import { listKeyPrefix } from '@/providers/live-provider';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { refetchOnWindowFocus: false, retry: false, staleTime: 30_000 },
    mutations: { retry: false },
  },
});
// The live provider keeps unchanged desktops as the same objects; structural sharing would walk the
// whole list (5,000 records) on every socket event for nothing.
queryClient.setQueryDefaults(listKeyPrefix('desktops'), { structuralSharing: false });
