import '@mantine/core/styles/Skeleton.css';
import { Skeleton, Stack } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** Shown while a screen's chunk loads: the shape of a page (title row, toolbar, content). */
export function PageLoader() {
  const { t } = useTranslation();
  return (
    <Stack gap="sm" role="status" aria-label={t('common:loading')} data-testid="page-loading">
      <Skeleton height={34} width="30%" />
      <Skeleton height={36} width="45%" />
      <Skeleton height={280} />
    </Stack>
  );
}
