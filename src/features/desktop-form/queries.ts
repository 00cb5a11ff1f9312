/** Query-options factories of the desktop form (keys live here, never as literals elsewhere). */
import { queryOptions } from '@tanstack/react-query';
import { request } from '@/providers/http-client';

export interface CardImage {
  id: string;
  type: 'stock' | 'user';
  url?: string;
}

export const desktopFormQueries = {
  hardwareAllowed: () =>
    queryOptions({
      queryKey: ['desktops.hardwareAllowed'],
      queryFn: () => request('desktops.hardwareAllowed'),
    }),
  templates: () =>
    queryOptions({
      queryKey: ['templates.allowed', 'all'],
      queryFn: async () => (await request('templates.allowed', { params: { kind: 'all' } })) ?? [],
    }),
  media: () =>
    queryOptions({
      queryKey: ['media.shared'],
      queryFn: async () => (await request('media.shared')) ?? [],
    }),
  images: () =>
    queryOptions({
      queryKey: ['desktops.images'],
      queryFn: async () => (await request('desktops.images')) ?? [],
    }),
  info: (id: string) =>
    queryOptions({
      queryKey: ['desktops.show', id],
      queryFn: () => request('desktops.show', { params: { id } }),
      staleTime: 0,
    }),
};
