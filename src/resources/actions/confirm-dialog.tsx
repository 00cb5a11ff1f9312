/**
 * The confirmation of an action: the question naming the record, the action's hint
 * (`resources:<resource>.confirmHints.<action>`) when there is one, what the caller adds (the
 * permanent choice, what the action affects), and the action as the button.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useState, type ReactNode } from 'react';
import { Button, Group, Modal, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { showError } from '@/lib/error-display';
import { optionalText } from '@/i18n/optional-text';

export interface ConfirmDialogProps {
  resource: string;
  /** The action's name in the schema. */
  action: string;
  /** What the action is about (the record's title). */
  name: string;
  color?: string | undefined;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  /** Close once the action succeeded (default); false when the caller shows what it answered. */
  closeOnSuccess?: boolean;
  /** What the confirmation adds (what the action affects, the permanent choice). */
  children?: ReactNode;
}

/** The hint of an action's confirmation, or '' when it has none. */
export function useConfirmHint(resource: string, action: string): string {
  const { t } = useTranslation();
  return optionalText(t, `resources:${resource}.confirmHints.${action}`);
}

export function ConfirmDialog({
  resource,
  action,
  name,
  color,
  onConfirm,
  onClose,
  closeOnSuccess = true,
  children,
}: ConfirmDialogProps) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const label = t(`resources:${resource}.stateActions.${action}`);
  const hint = useConfirmHint(resource, action);
  const confirm = (): void => {
    setBusy(true);
    onConfirm()
      .then(() => {
        if (closeOnSuccess) onClose();
      })
      .catch((error: unknown) => {
        showError(error);
        setBusy(false);
      });
  };
  return (
    <Modal opened onClose={onClose} title={label} centered>
      <Text size="sm">{t('common:confirm.question', { action: label, name })}</Text>
      {hint && (
        <Text size="sm" c="dimmed" mt="xs" data-testid="confirm-hint">
          {hint}
        </Text>
      )}
      {children}
      <Group justify="flex-end" mt="md">
        <Button variant="default" onClick={onClose} disabled={busy}>
          {t('common:actions.cancel')}
        </Button>
        <Button
          color={color ?? 'blue'}
          onClick={confirm}
          loading={busy}
          data-testid="confirm-action"
          data-action={action}
        >
          {label}
        </Button>
      </Group>
    </Modal>
  );
}
