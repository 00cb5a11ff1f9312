import { Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { usePageTitle } from '@/hooks/use-page-title';

export interface PlaceholderPageProps {
  /** Translated page title. */
  title: string;
}

/** Stand-in for screens without a bespoke page yet: the route exists and is titled. */
export function PlaceholderPage({ title }: PlaceholderPageProps) {
  const { t } = useTranslation();
  usePageTitle(title);
  return (
    <Stack>
      <Title order={1}>{title}</Title>
      <Text c="dimmed">{t('common:placeholder')}</Text>
    </Stack>
  );
}
