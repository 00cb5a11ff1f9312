import '@mantine/core/styles/Checkbox.css';
import { useRef, useState } from 'react';
import { Box, Checkbox } from '@mantine/core';
import { useNotification } from '@refinedev/core';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { actionDoneMessage } from './action-done';
import { ActionPreview } from './action-preview';
import { ActionResultModal } from './action-result';
import { thenHref, useActionSuccess } from './action-success';
import type { AvailableAction } from './available-actions';
import { ConfirmDialog } from './confirm-dialog';
import { titleWithName } from './record-operation';

type Record = Readonly<globalThis.Record<string, unknown>>;

/** The confirmation of an action (the recycle-bin choice; the answer of a `result` action). */
export function ConfirmActionModal({
  resource,
  name,
  action,
  record,
  run,
  onDone,
  onClose,
}: {
  resource: string;
  /** The record the action is about (none for list actions). */
  record?: Record;
  /** What the action is about (a record's title, or the list's). */
  name: string;
  action: AvailableAction;
  /** Calls the action (the permanent variant when asked); resolves with the answer. */
  run: (operation: string) => Promise<unknown>;
  /** Called once the operation succeeded. */
  onDone?: ((operation: string) => void) | undefined;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { open } = useNotification();
  const navigate = useNavigate();
  const success = useActionSuccess();
  const [permanent, setPermanent] = useState(false);
  const [answer, setAnswer] = useState<{ operation: string; value: unknown } | null>(null);
  const succeeded = useRef(false);
  const label = t(`resources:${resource}.stateActions.${action.name}`);
  const confirm = async (): Promise<void> => {
    const operation =
      permanent && action.def.permanent ? action.def.permanent : action.def.operation;
    if (!operation) return;
    const value = await run(operation);
    succeeded.current = true;
    open?.({
      type: 'success',
      message: actionDoneMessage(t, resource, operation, label, name),
    });
    onDone?.(operation);
    await success({
      resource,
      name: action.name,
      def: action.def,
      record: record ?? {},
      values: {},
      answer: value,
    });
    if (action.def.result) setAnswer({ operation, value });
  };
  const close = (): void => {
    onClose();
    const href = succeeded.current ? thenHref(resource, action.def, record ?? {}) : null;
    if (href) void navigate(href);
  };
  if (answer)
    return (
      <ActionResultModal
        resource={resource}
        name={action.name}
        hintWhen={action.def.resultHintWhen}
        operation={answer.operation}
        answer={answer.value}
        title={titleWithName(label, name)}
        onClose={close}
      />
    );
  return (
    <ConfirmDialog
      resource={resource}
      action={action.name}
      name={name}
      color={action.def.color}
      onConfirm={confirm}
      onClose={close}
      closeOnSuccess={!action.def.result}
    >
      {action.def.preview && record && (
        <Box mt="sm">
          <ActionPreview resource={resource} record={record} def={action.def} />
        </Box>
      )}
      {action.def.permanent && (
        <Checkbox
          mt="md"
          label={t('common:confirm.permanent')}
          description={t('common:confirm.permanentHint')}
          checked={permanent}
          onChange={(event) => setPermanent(event.currentTarget.checked)}
          data-testid="confirm-permanent"
        />
      )}
    </ConfirmDialog>
  );
}
