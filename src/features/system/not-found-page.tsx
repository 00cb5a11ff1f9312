import { Button, Center, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { usePageTitle } from '@/hooks/use-page-title';
import { HOME_PATH } from '@/lib/paths';

/** Not-found page (route `*`). */
export function NotFoundPage() {
  const { t } = useTranslation();
  usePageTitle(t('common:routes.not_found'));
  return (
    <Center mih="80vh">
      <Stack align="center">
        <Title order={1}>{t('common:notFound.title')}</Title>
        <Text>{t('common:notFound.body')}</Text>
        <Button component={Link} to={HOME_PATH}>
          {t('common:actions.home')}
        </Button>
      </Stack>
    </Center>
  );
}
