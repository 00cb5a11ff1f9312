import { memo, useState } from 'react';
import { Button, Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { Desktop } from '@/generated/types';
import { showError } from '@/lib/error-display';
import { actionParams, actionsFor, type ActionSpec } from '@/resources/state-actions';
import { request } from '@/providers/http-client';

const RESOURCE = 'desktops';
const CONFIRM_WINDOW_MS = 4000;

/** Calls the generated operation of a state action. */
export async function runDesktopAction(
  desktop: Pick<Desktop, 'id'>,
  spec: ActionSpec,
): Promise<void> {
  await request(`${RESOURCE}.${spec.operation}`, {
    params: { id: desktop.id, ...actionParams(RESOURCE, spec.name) },
  });
}

export interface DesktopActionsProps {
  /** The desktop whose state decides the buttons. */
  desktop: Desktop;
}

/** The state-machine buttons of a desktop (generated table + overrides). */
export const DesktopActions = memo(function DesktopActions({ desktop }: DesktopActionsProps) {
  const { t } = useTranslation();
  const [confirming, setConfirming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const specs = actionsFor(RESOURCE, desktop as unknown as Record<string, unknown>);
  if (!specs.length) return null;

  const click = (spec: ActionSpec): void => {
    if (spec.confirm && confirming !== spec.name) {
      setConfirming(spec.name);
      setTimeout(
        () => setConfirming((current) => (current === spec.name ? null : current)),
        CONFIRM_WINDOW_MS,
      );
      return;
    }
    setConfirming(null);
    setBusy(true);
    runDesktopAction(desktop, spec)
      .catch((error: unknown) => showError(error))
      .finally(() => setBusy(false));
  };

  return (
    <Group gap={6} wrap="wrap">
      {specs.map((spec) => (
        <Button
          key={spec.name}
          size="compact-sm"
          color={spec.color}
          variant={spec.primary ? 'filled' : 'light'}
          disabled={busy}
          data-action={spec.name}
          onClick={() => click(spec)}
        >
          {confirming === spec.name
            ? t('common:actions.confirm')
            : t(`resources:desktops.stateActions.${spec.name}`)}
        </Button>
      ))}
    </Group>
  );
});
