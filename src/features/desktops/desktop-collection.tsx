import { memo, useRef } from 'react';
import { Box } from '@mantine/core';
import { useElementSize } from '@mantine/hooks';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { Desktop } from '@/generated/types';
import { DesktopCard, DesktopRow } from './desktop-card';

export type DesktopView = 'grid' | 'list';

const CARD_MIN_WIDTH = 260;
const CARD_HEIGHT = 360;
const ROW_HEIGHT = 64;
const GAP = 12;

export interface DesktopCollectionProps {
  /** Desktops to show (already filtered). */
  desktops: readonly Desktop[];
  /** Grid of cards or list of rows. */
  view: DesktopView;
  /** Accessible label of the scroll region. */
  label: string;
}

/** Virtualised grid/list: only the visible rows exist in the DOM, whatever the number of desktops. */
/** Memoised: the filter's urgent render (the input) skips the list; only the deferred one renders it. */
export const DesktopCollection = memo(function DesktopCollection({
  desktops,
  view,
  label,
}: DesktopCollectionProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const { ref: sizeRef, width } = useElementSize();
  const columns =
    view === 'grid' ? Math.max(1, Math.floor((width + GAP) / (CARD_MIN_WIDTH + GAP))) : 1;
  const rowCount = Math.ceil(desktops.length / columns);
  const rowHeight = view === 'grid' ? CARD_HEIGHT + GAP : ROW_HEIGHT;

  const virtualizer = useVirtualizer({
    count: rowCount,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 2,
    initialRect: { width: 1024, height: 800 },
  });

  return (
    <Box
      ref={scrollRef}
      style={{ height: 'calc(100dvh - 200px)', minHeight: 320, overflowY: 'auto' }}
      role="region"
      aria-label={label}
      tabIndex={0}
      data-testid="desktop-collection"
      data-view={view}
    >
      <div
        ref={sizeRef}
        style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}
      >
        {virtualizer.getVirtualItems().map((row) => {
          const start = row.index * columns;
          const items = desktops.slice(start, start + columns);
          return (
            <div
              key={row.key}
              style={{
                position: 'absolute',
                top: 0,
                left: 0,
                width: '100%',
                height: view === 'grid' ? CARD_HEIGHT : ROW_HEIGHT,
                transform: `translateY(${row.start}px)`,
                display: 'grid',
                gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))`,
                gap: GAP,
              }}
            >
              {items.map((desktop) =>
                view === 'grid' ? (
                  <DesktopCard key={desktop.id} desktop={desktop} />
                ) : (
                  <DesktopRow key={desktop.id} desktop={desktop} />
                ),
              )}
            </div>
          );
        })}
      </div>
    </Box>
  );
});
