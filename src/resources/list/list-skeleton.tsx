import { SimpleGrid, Skeleton, Stack } from '@mantine/core';
import { useTranslation } from 'react-i18next';

const countKey = (resource: string) => `list-count:${resource}`;
/** Placeholders without a count seen before (a first visit). */
const DEFAULT_COUNT = { cards: 8, table: 10 } as const;

/** Remembers how many records a list showed, so its next loading shows as many placeholders. */
export function rememberListCount(resource: string, count: number): void {
  try {
    localStorage.setItem(countKey(resource), String(count));
  } catch {
    // the count is not remembered
  }
}

/** The placeholders of a list: as many as it showed last time (at least one), else a default. */
export function skeletonCount(resource: string, view: 'cards' | 'table'): number {
  let saved: number = Number.NaN;
  try {
    saved = Number(localStorage.getItem(countKey(resource)) ?? Number.NaN);
  } catch {
    // no remembered count
  }
  return Number.isFinite(saved)
    ? Math.min(Math.max(Math.round(saved), 1), DEFAULT_COUNT[view])
    : DEFAULT_COUNT[view];
}

/**
 * Placeholders shaped like the view that is loading (cards or table rows), never a spinner; as
 * many as the list showed last time, so the layout does not jump when the records arrive.
 */
export function ListSkeleton({ view, resource }: { view: 'cards' | 'table'; resource: string }) {
  const count = skeletonCount(resource, view);
  const { t } = useTranslation();
  return (
    <div role="status" aria-label={t('common:loading')} data-testid="list-loading">
      {view === 'cards' ? (
        <SimpleGrid cols={{ base: 1, sm: 2, md: 3, lg: 4 }} spacing="sm">
          {Array.from({ length: count }, (_, i) => (
            <Stack key={i} gap={8}>
              <Skeleton height={150} radius="sm" />
              <Skeleton height={14} width="70%" />
              <Skeleton height={12} width="50%" />
              <Skeleton height={28} width="40%" />
            </Stack>
          ))}
        </SimpleGrid>
      ) : (
        <Stack gap={6}>
          {Array.from({ length: count }, (_, i) => (
            <Skeleton key={i} height={40} radius="sm" />
          ))}
        </Stack>
      )}
    </div>
  );
}
