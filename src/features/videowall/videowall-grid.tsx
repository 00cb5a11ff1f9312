/**
 * The tiles of the videowall, one per deployment desktop, keyed by id and sorted by user name.
 * The grid re-renders when the desktop list changes, but each tile is memoised: only tiles whose
 * desktop object changed render again.
 */
import { useMemo } from 'react';
import type { DeploymentDesktop } from '@/generated/types';
import type { ThumbnailScheduler } from './thumbnail-scheduler';
import { VideowallTile } from './videowall-tile';
import classes from './videowall.module.css';

export interface VideowallGridProps {
  /** The deployment's desktops. */
  desktops: readonly DeploymentDesktop[];
  /** Shared thumbnail scheduler of the wall. */
  scheduler: ThumbnailScheduler;
  /** The "thumbnails on/off" switch. */
  thumbnails: boolean;
  /** Opens a desktop's console; must be stable (useCallback) or every tile re-renders. */
  onOpen: (id: string) => void;
  /** Called on every tile render (tests count renders). */
  onTileRender?: (id: string) => void;
}

const byUser = (a: DeploymentDesktop, b: DeploymentDesktop): number =>
  (a.user_name ?? a.name).localeCompare(b.user_name ?? b.name) || a.id.localeCompare(b.id);

export function VideowallGrid({
  desktops,
  scheduler,
  thumbnails,
  onOpen,
  onTileRender,
}: VideowallGridProps) {
  const sorted = useMemo(() => [...desktops].sort(byUser), [desktops]);
  return (
    <div className={classes.grid} data-testid="videowall-grid">
      {sorted.map((desktop) => (
        <VideowallTile
          key={desktop.id}
          desktop={desktop}
          scheduler={scheduler}
          thumbnails={thumbnails}
          onOpen={onOpen}
          {...(onTileRender ? { onRender: onTileRender } : {})}
        />
      ))}
    </div>
  );
}
