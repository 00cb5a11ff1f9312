/** The title of an operation form page. */
import { Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';

export function FormTitle({ resource, kind }: { resource: string; kind: string }) {
  const { t } = useTranslation();
  return (
    <Title order={1} size="h2" id={`${resource}-create-title`}>
      {t(`resources:${resource}.actions.${kind}`)}
    </Title>
  );
}
