/**
 * The cards view of a generated list: a virtualised grid (rows of cards, only the visible rows in
 * the DOM) drawn by the resource's registered card renderer. Each row is measured, so a card is
 * as tall as its content and the grid leaves no empty band. A card renderer marks its root with
 * `data-record-id` (the focus rules find a record's card by it).
 *
 * The first paint holds only the rows on screen, in as many columns as the grid's width takes
 * (measured before that paint), and so does the first paint after the filter changes (`query`):
 * the rows beyond the screen (overscan) follow the next frame.
 */
import { memo, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { Box } from '@mantine/core';
import { useElementSize } from '@mantine/hooks';
import { useVirtualizer } from '@tanstack/react-virtual';
import { resolveCard } from '../cards/card-registry';
import type { ListRecord } from './list-filter';

const CARD_MIN_WIDTH = 260;
const ESTIMATED_ROW_HEIGHT = 330;
const GAP = 12;
const OVERSCAN_ROWS = 2;
/** The grid's height below the title and the toolbar (its style's calc). */
const CHROME_HEIGHT = 220;
const MIN_HEIGHT = 320;

export interface ResourceCardsProps {
  resource: string;
  /** Registered card renderer name (x-ui.list.card). */
  card: string;
  records: readonly ListRecord[];
  /** Accessible name of the scroll region. */
  label: string;
  /** The id of a record to scroll to (a record just created), or null. */
  revealId?: string | null;
  /** What filters the records (text, tab, toggles): a new one paints the rows on screen first. */
  query?: string;
}

export const ResourceCards = memo(function ResourceCards({
  resource,
  card,
  records,
  label,
  revealId = null,
  query = '',
}: ResourceCardsProps) {
  const Card = resolveCard(resource, card);
  const scrollRef = useRef<HTMLDivElement>(null);
  const { ref: sizeRef, width: observedWidth } = useElementSize();
  // The width before the first paint (the size observer answers after it): null until measured.
  const [firstWidth, setFirstWidth] = useState<number | null>(null);
  useLayoutEffect(() => setFirstWidth(scrollRef.current?.clientWidth ?? 0), []);
  // The query whose rows beyond the screen are drawn: null before the first paint.
  const [overscanQuery, setOverscanQuery] = useState<string | null>(null);
  useEffect(() => {
    const frame = requestAnimationFrame(() => setOverscanQuery(query));
    return () => cancelAnimationFrame(frame);
  }, [query]);
  const width = observedWidth || (firstWidth ?? 0);
  const columns = Math.max(1, Math.floor((width + GAP) / (CARD_MIN_WIDTH + GAP)));
  const rowCount = Math.ceil(records.length / columns);
  const virtualizer = useVirtualizer({
    count: rowCount,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ESTIMATED_ROW_HEIGHT + GAP,
    overscan: overscanQuery === query ? OVERSCAN_ROWS : 0,
    initialRect: {
      width,
      height: Math.max(
        MIN_HEIGHT,
        (typeof window === 'undefined' ? 800 : window.innerHeight) - CHROME_HEIGHT,
      ),
    },
  });
  const revealRow =
    revealId === null
      ? -1
      : Math.floor(records.findIndex((record) => String(record.id) === revealId) / columns);
  useEffect(() => {
    if (revealRow >= 0) virtualizer.scrollToIndex(revealRow, { align: 'auto' });
  }, [virtualizer, revealRow]);

  return (
    <Box
      ref={scrollRef}
      style={{ height: 'calc(100dvh - 220px)', minHeight: 320, overflowY: 'auto' }}
      role="region"
      aria-label={label}
      tabIndex={0}
      data-testid="resource-collection"
      data-view="cards"
      data-resource={resource}
    >
      <div
        ref={sizeRef}
        style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}
      >
        {(firstWidth === null ? [] : virtualizer.getVirtualItems()).map((row) => {
          const start = row.index * columns;
          const items = records.slice(start, start + columns);
          return (
            <div
              key={row.key}
              data-index={row.index}
              ref={virtualizer.measureElement}
              role="list"
              style={{
                position: 'absolute',
                top: 0,
                left: 0,
                width: '100%',
                transform: `translateY(${row.start}px)`,
                paddingBottom: GAP,
                display: 'grid',
                gridTemplateColumns: `repeat(${columns}, minmax(0, 1fr))`,
                gap: GAP,
                // Each card keeps its own height: stretched to the row's tallest, a shorter card
                // showed an empty band under its content.
                alignItems: 'start',
              }}
            >
              {items.map((record) => (
                <div
                  role="listitem"
                  key={String(record.id)}
                  style={{ display: 'flex', minWidth: 0 }}
                >
                  <Card resource={resource} record={record} />
                </div>
              ))}
            </div>
          );
        })}
      </div>
    </Box>
  );
});
