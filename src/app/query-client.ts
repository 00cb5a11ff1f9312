/** The application's single QueryClient (refine uses it; the live provider patches it). */
import { QueryClient } from '@tanstack/react-query';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { refetchOnWindowFocus: false, retry: false, staleTime: 30_000 },
    mutations: { retry: false },
  },
});
