import { Suspense, useState } from 'react';
import { Button, Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Icon } from '@/components/icon';
import { showError } from '@/lib/error-display';
import { useSessionRole } from '@/lib/session-state';
import { requestOperation } from '@/providers/http-client';
import { openActionDialog } from './action-dialogs';
import { resolveActionHandler } from './action-registry';
import { listActions, type AvailableAction } from './available-actions';
import { ConfirmActionModal } from './confirm-action-modal';
import { ActionFormDialog } from './lazy-action-form-dialog';

type Record = Readonly<globalThis.Record<string, unknown>>;

/** What a list action is about: the whole list, no record. */
const NO_RECORD: Record = Object.freeze({});

export interface ListActionsProps {
  resource: string;
  /** x-ui.list.actions: actions on the whole list. */
  names: readonly string[];
}

/**
 * Actions on the whole list (empty the recycle bin, import or export a CSV...), in the title row:
 * a handler's (a download) draws itself; one with a form opens its dialog (its answer shown
 * when it has `result`); the others run, after a confirmation when they ask one.
 */
export function ListActions({ resource, names }: ListActionsProps) {
  const { t } = useTranslation();
  const role = useSessionRole();
  const [confirming, setConfirming] = useState<AvailableAction | null>(null);
  const actions = listActions(resource, names, role);
  if (actions.length === 0) return null;
  const title = t(`resources:${resource}.title`);
  const run = (operation: string) => requestOperation(`${resource}.${operation}`);
  const start = (action: AvailableAction): void => {
    if (action.def.form) {
      openActionDialog((close) => (
        <Suspense fallback={null}>
          <ActionFormDialog
            resource={resource}
            record={NO_RECORD}
            name={action.name}
            def={action.def}
            title={title}
            onClose={close}
          />
        </Suspense>
      ));
      return;
    }
    if (action.def.confirm || action.def.result) setConfirming(action);
    else void run(action.def.operation ?? '').catch(showError);
  };
  return (
    <Group gap={6}>
      {actions.map((action) => {
        if (action.def.handler) {
          const Handler = resolveActionHandler(resource, action.name, action.def.handler);
          return (
            <Handler
              key={action.name}
              resource={resource}
              record={NO_RECORD}
              name={action.name}
              def={action.def}
              variant="button"
            />
          );
        }
        return (
          <Button
            key={action.name}
            variant="default"
            color={action.def.color}
            leftSection={action.def.icon ? <Icon name={action.def.icon} size={16} /> : null}
            onClick={() => start(action)}
            data-action={action.name}
          >
            {t(`resources:${resource}.stateActions.${action.name}`)}
          </Button>
        );
      })}
      {confirming && (
        <ConfirmActionModal
          resource={resource}
          name={title}
          action={confirming}
          run={run}
          onClose={() => setConfirming(null)}
        />
      )}
    </Group>
  );
}
