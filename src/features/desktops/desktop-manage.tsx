import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { memo, useState } from 'react';
import { Button, Group, Modal, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { resources } from '@/generated/resources';
import type { Desktop } from '@/generated/types';
import { showError } from '@/lib/error-display';
import { request } from '@/providers/http-client';
import { ruleAllows } from '@/resources/state-actions';

const editPath =
  (resources.find((resource) => resource.name === 'desktops') as { edit?: string } | undefined)
    ?.edit ?? null;

/** Edit link of a desktop (edit route with `?id=`), or null when there is no edit route. */
export function desktopEditHref(id: string): string | null {
  return editPath ? `${editPath}?id=${encodeURIComponent(id)}` : null;
}

export interface DesktopManageProps {
  /** The desktop to edit or delete. */
  desktop: Desktop;
}

/** Edit and Delete (with a confirmation dialog) of a stopped persistent desktop. */
export const DesktopManage = memo(function DesktopManage({ desktop }: DesktopManageProps) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const record = desktop as unknown as Record<string, unknown>;
  const persistent = desktop.type === 'persistent';
  const canEdit =
    persistent && desktop.editable !== false && ruleAllows('desktops', 'edit', record);
  const canDelete = persistent && ruleAllows('desktops', 'delete', record);
  const href = desktopEditHref(desktop.id);
  if (!canEdit && !canDelete) return null;

  const remove = (): void => {
    setBusy(true);
    request('desktops.delete', { params: { id: desktop.id } })
      .then(() => setConfirming(false))
      .catch((error: unknown) => showError(error))
      .finally(() => setBusy(false));
  };

  return (
    <Group gap={6}>
      {canEdit && href && (
        <Button component={Link} to={href} size="compact-sm" variant="default" data-action="edit">
          {t('common:actions.edit')}
        </Button>
      )}
      {canDelete && (
        <Button
          size="compact-sm"
          color="red"
          variant="subtle"
          onClick={() => setConfirming(true)}
          data-action="delete"
        >
          {t('common:actions.delete')}
        </Button>
      )}
      {/* Mounted only while confirming: a closed Modal per card still costs its hooks when thousands of cards mount. */}
      {confirming && (
        <Modal
          opened
          onClose={() => setConfirming(false)}
          title={t('common:desktops.deleteTitle')}
          centered
        >
          <Text size="sm">{t('common:desktops.deleteConfirm', { name: desktop.name })}</Text>
          <Group justify="flex-end" mt="md">
            <Button variant="default" onClick={() => setConfirming(false)} disabled={busy}>
              {t('common:actions.cancel')}
            </Button>
            <Button color="red" onClick={remove} loading={busy} data-testid="confirm-delete">
              {t('common:actions.delete')}
            </Button>
          </Group>
        </Modal>
      )}
    </Group>
  );
});
