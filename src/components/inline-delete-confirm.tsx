/**
 * A delete asked again in place (inside a modal that already shows the record): a red notice with
 * its question, a cancel and the destructive button.
 */
import '@mantine/core/styles/Alert.css';
import { Alert, Button, Group, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';

export interface InlineDeleteConfirmProps {
  title: string;
  question: string;
  /** The destructive button's label. */
  confirmLabel: string;
  busy: boolean;
  onCancel: () => void;
  onConfirm: () => void;
  /** data-testid of the destructive button. */
  testId: string;
}

export function InlineDeleteConfirm({
  title,
  question,
  confirmLabel,
  busy,
  onCancel,
  onConfirm,
  testId,
}: InlineDeleteConfirmProps) {
  const { t } = useTranslation();
  return (
    <Alert color="red" title={title}>
      <Stack gap="xs">
        <Text size="sm">{question}</Text>
        <Group gap="xs" justify="flex-end">
          <Button variant="default" onClick={onCancel} disabled={busy}>
            {t('common:actions.cancel')}
          </Button>
          <Button color="red" onClick={onConfirm} loading={busy} data-testid={testId}>
            {confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}
