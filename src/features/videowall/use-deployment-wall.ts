/**
 * The videowall's data: the deployment's detail (`deployments.show` through refine's useOne, so
 * the live provider's `deployments_update` patch of the counters and its invalidations reach it
 * too) kept live by the deployment-desktop socket events (`deploymentdesktop_add/_update/_delete`,
 * named only in the generated event table). Each event replaces ONE desktop object in the cached
 * detail (older versions and other deployments' desktops are dropped), so only that desktop's
 * tile gets new props. Events are applied once per animation frame (a burst of 30 state changes
 * costs one render).
 */
import { useOne, useSubscription, type LiveEvent } from '@refinedev/core';
import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useRef } from 'react';
import type { DeploymentDesktop, DeploymentDetail } from '@/generated/types';
import { resourceKeyPrefix } from '@/providers/live-provider';

export type WallEvent =
  | { type: 'created' | 'updated'; desktop: DeploymentDesktop }
  | { type: 'deleted'; id: string; tag?: string };

/** The deployment detail with one event applied (the same object when nothing changes). */
export function applyWallEvent(detail: DeploymentDetail, event: WallEvent): DeploymentDetail {
  const desktops = detail.desktops;
  if (event.type === 'deleted') {
    if (event.tag !== undefined && event.tag !== detail.id) return detail;
    const next = desktops.filter((d) => d.id !== event.id);
    return next.length === desktops.length ? detail : { ...detail, desktops: next };
  }
  const incoming = event.desktop;
  if (incoming.tag !== detail.id) return detail;
  const index = desktops.findIndex((d) => d.id === incoming.id);
  if (index === -1) return { ...detail, desktops: [...desktops, incoming] };
  const current = desktops[index];
  if (
    current &&
    typeof current.version === 'number' &&
    typeof incoming.version === 'number' &&
    incoming.version < current.version
  )
    return detail;
  const next = desktops.slice();
  next[index] = { ...current, ...incoming };
  return { ...detail, desktops: next };
}

/** A live event of the `resources/deployment-desktops` channel as a wall event (null if not one). */
export function toWallEvent(event: LiveEvent): WallEvent | null {
  const payload = (event.payload ?? {}) as Record<string, unknown>;
  // The live provider adds refine's `ids` to the record; it is not part of the desktop.
  const { ids: _ids, ...record } = payload;
  if (typeof record.id !== 'string') return null;
  if (event.type === 'deleted')
    return {
      type: 'deleted',
      id: record.id,
      ...(typeof record.tag === 'string' ? { tag: record.tag } : {}),
    };
  if (event.type === 'created' || event.type === 'updated')
    return { type: event.type, desktop: record as unknown as DeploymentDesktop };
  return null;
}

const schedule = (fn: () => void): void => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(fn);
  else setTimeout(fn, 16);
};

export interface DeploymentWall {
  detail: DeploymentDetail | undefined;
  isLoading: boolean;
  error: unknown;
}

export function useDeploymentWall(id: string): DeploymentWall {
  const queryClient = useQueryClient();
  const { result, query } = useOne<DeploymentDetail>({
    resource: 'deployments',
    id,
    queryOptions: { enabled: !!id },
    errorNotification: false,
  });

  const pending = useRef<WallEvent[]>([]);
  const idRef = useRef(id);
  useEffect(() => {
    idRef.current = id;
    pending.current = [];
  }, [id]);

  const onLiveEvent = useCallback(
    (event: LiveEvent): void => {
      const wallEvent = toWallEvent(event);
      if (!wallEvent) return;
      pending.current.push(wallEvent);
      if (pending.current.length > 1) return;
      schedule(() => {
        const events = pending.current;
        pending.current = [];
        queryClient.setQueriesData<{ data: DeploymentDetail }>(
          { queryKey: [...resourceKeyPrefix('deployments'), 'one', idRef.current] },
          (cache) => {
            if (!cache?.data || !Array.isArray(cache.data.desktops)) return cache;
            const data = events.reduce(applyWallEvent, cache.data);
            return data === cache.data ? cache : { ...cache, data };
          },
        );
      });
    },
    [queryClient],
  );

  // useSubscription subscribes once (its effect depends on `enabled` only): the callback is stable.
  useSubscription({
    channel: 'resources/deployment-desktops',
    types: ['created', 'updated', 'deleted'],
    enabled: !!id,
    onLiveEvent,
  });

  return { detail: result, isLoading: query.isLoading, error: query.error };
}
