import { SimpleGrid, Skeleton, Stack } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** Placeholders shaped like the view that is loading (cards or table rows), never a spinner. */
export function ListSkeleton({ view }: { view: 'cards' | 'table' }) {
  const { t } = useTranslation();
  return (
    <div role="status" aria-label={t('common:loading')} data-testid="list-loading">
      {view === 'cards' ? (
        <SimpleGrid cols={{ base: 1, sm: 2, md: 3, lg: 4 }} spacing="sm">
          {Array.from({ length: 8 }, (_, i) => (
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
          {Array.from({ length: 10 }, (_, i) => (
            <Skeleton key={i} height={40} radius="sm" />
          ))}
        </Stack>
      )}
    </div>
  );
}
