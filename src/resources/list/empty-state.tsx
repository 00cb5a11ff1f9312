import '@mantine/core/styles/ThemeIcon.css';
import { Button, Stack, Text, ThemeIcon } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { Icon } from '@/components/icon';

export interface EmptyStateProps {
  resource: string;
  /** Schema icon of the resource. */
  icon: string | null;
  /** The primary action's href (create), when the role may use it. */
  actionHref: string | null;
}

/** A list with no records yet: an icon, one sentence, and the primary action. */
export function EmptyState({ resource, icon, actionHref }: EmptyStateProps) {
  const { t } = useTranslation();
  return (
    <Stack align="center" gap="sm" py="xl" data-testid="empty-state">
      {icon && (
        <ThemeIcon size={56} radius="xl" variant="light">
          <Icon name={icon} size={30} />
        </ThemeIcon>
      )}
      <Text c="dimmed" ta="center">
        {t(`resources:${resource}.empty`)}
      </Text>
      {actionHref && (
        <Button component={Link} to={actionHref} variant="light">
          {t(`resources:${resource}.actions.create`)}
        </Button>
      )}
    </Stack>
  );
}
