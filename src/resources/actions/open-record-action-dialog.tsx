import { Suspense } from 'react';
import { openActionDialog } from './action-dialogs';
import type { AvailableAction } from './available-actions';
import { ConfirmActionModal } from './confirm-action-modal';
import { ActionFormDialog } from './lazy-action-form-dialog';
import { recordTitle, runOperation } from './record-operation';

type Record = Readonly<globalThis.Record<string, unknown>>;

export interface ActionDialogRequest {
  resource: string;
  record: Record;
  action: AvailableAction;
  /** Called once the action's operation succeeded. */
  onDone?: ((operation: string) => void) | undefined;
  /** Called when the dialog closes (after success or not). */
  onClosed?: (() => void) | undefined;
}

/**
 * Opens the dialog of a record's action: its form, or its confirmation (the recycle-bin choice,
 * the answer of a `result` action). Returns false when the action has no dialog (it runs at once,
 * opens a route or is a handler's).
 */
export function openRecordActionDialog({
  resource,
  record,
  action,
  onDone,
  onClosed,
}: ActionDialogRequest): boolean {
  const { def } = action;
  if (def.handler || def.route || !def.operation) return false;
  if (def.form) {
    openActionDialog((close) => (
      <Suspense fallback={null}>
        <ActionFormDialog
          resource={resource}
          record={record}
          name={action.name}
          def={def}
          title={recordTitle(resource, record)}
          onDone={onDone}
          onClose={() => {
            close();
            onClosed?.();
          }}
        />
      </Suspense>
    ));
    return true;
  }
  if (def.confirm || def.permanent) {
    openActionDialog((close) => (
      <ConfirmActionModal
        resource={resource}
        name={recordTitle(resource, record)}
        action={action}
        record={record}
        run={(operation) => runOperation(resource, record, operation, def)}
        onDone={onDone}
        onClose={() => {
          close();
          onClosed?.();
        }}
      />
    ));
    return true;
  }
  return false;
}
