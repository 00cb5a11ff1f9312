import { Button, Center, Stack, Text, Title } from '@mantine/core';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { usePageTitle } from '@/hooks/use-page-title';
import { HOME_PATH } from '@/lib/paths';

const KNOWN = new Set(['401', '403', '500']);

/** Error pages: 401 group has no permission, 403 access denied, 500 unexpected. */
export function ErrorPage() {
  const { t } = useTranslation();
  const { code = '500' } = useParams();
  const key = KNOWN.has(code) ? code : '500';
  usePageTitle(t('common:routes.error', { code }));
  return (
    <Center mih="80vh">
      <Stack align="center" maw={480}>
        <Title order={1}>{code}</Title>
        <Text ta="center" data-testid="error-message">
          {t(`common:errorPage.${key}`)}
        </Text>
        <Button component={Link} to={HOME_PATH}>
          {t('common:actions.home')}
        </Button>
      </Stack>
    </Center>
  );
}
