/**
 * The actions of one record, wherever it is shown (card, table row, details page): the primary
 * ones as buttons, the rest in a "more" menu. An action calls its operation (with a confirmation
 * naming the record when the schema asks, and the recycle-bin choice when the action has a
 * permanent variant), opens its route, or hands over to a registered handler. Its dialogs (form,
 * confirmation, answer) mount in the action dialog host, so a details page can also open one from
 * its URL (`openRecordActionDialog`). After success the record is read again, the action's effect
 * runs and its `then` route opens. The focus never drops to the page body meanwhile: it follows
 * the rule of `focus-after-action` (the control in the pressed one's place, else the record). On
 * a phone's table row every action is an item of one menu ("Actions for <name>").
 */
import '@mantine/core/styles/Menu.css';
import { memo, useMemo, useState, type ReactNode } from 'react';
import { Button, Group, Menu } from '@mantine/core';
import { useNotification } from '@refinedev/core';
import { useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { Icon } from '@/components/icon';
import { showError } from '@/lib/error-display';
import { navigateTo } from '@/lib/navigation';
import { useSessionRole } from '@/lib/session-state';
import { useCellText } from '../cells/cell-registry';
import { openActionDialog } from './action-dialogs';
import { resolveActionHandler } from './action-registry';
import { ActionResultModal } from './action-result';
import { afterActionSuccess, thenHref } from './action-success';
import { actionHref, availableActions, type AvailableAction } from './available-actions';
import { holdFocus } from './focus-after-action';
import { MoreMenu } from './more-menu';
import { openRecordActionDialog } from './open-record-action-dialog';
import { ownDoneMessage } from './action-done';
import { recordName, recordTitle, runOperation, titleWithName } from './record-operation';

export { ListActions, type ListActionsProps } from './list-actions';
export { openRecordActionDialog, type ActionDialogRequest } from './open-record-action-dialog';
export { recordName, recordTitle, runOperation } from './record-operation';

type Record = Readonly<globalThis.Record<string, unknown>>;

export interface RecordActionsProps {
  resource: string;
  record: Record;
  /** Compact buttons for table rows. */
  compact?: boolean;
  /** Every action in one menu (a table row on a phone). */
  menu?: boolean;
  /** Actions not drawn here (a card that shows one action in its own place). */
  exclude?: readonly string[];
  /** Only these actions are drawn here (a details page's section draws its own). */
  include?: readonly string[] | undefined;
  /** Called once an action's operation (or its permanent variant) succeeded. */
  onDone?: (operation: string) => void;
}

/** Primary actions as buttons, the others in a "more" menu. */
export const RecordActions = memo(function RecordActions({
  resource,
  record,
  compact = false,
  menu = false,
  exclude = [],
  include,
  onDone,
}: RecordActionsProps) {
  const { t } = useCellText();
  const role = useSessionRole();
  const queryClient = useQueryClient();
  const { open } = useNotification();
  const [busy, setBusy] = useState<string | null>(null);
  const actions = useMemo(
    () =>
      availableActions(resource, record, role).filter(
        (a) => !exclude.includes(a.name) && (!include || include.includes(a.name)),
      ),
    [resource, record, role, exclude, include],
  );
  if (actions.length === 0) return null;
  const size = compact ? 'compact-sm' : 'sm';
  const label = (name: string) => t(`resources:${resource}.stateActions.${name}`);

  const start = (action: AvailableAction, pressed: HTMLElement): void => {
    if (openRecordActionDialog({ resource, record, action, onDone })) return;
    const { name, def } = action;
    if (!def.operation) return;
    const released = holdFocus(pressed);
    setBusy(name);
    const operation = def.operation;
    runOperation(resource, record, operation, def)
      .then(async (answer) => {
        // A direct action tells its result when it has its own text (a restore, not a start).
        const done = ownDoneMessage(t, resource, operation, recordName(resource, record));
        if (done) open?.({ type: 'success', message: done });
        onDone?.(operation);
        await afterActionSuccess(queryClient, { resource, name, def, record, values: {}, answer });
        const href = thenHref(resource, def, record);
        if (def.result)
          openActionDialog((close) => (
            <ActionResultModal
              resource={resource}
              name={name}
              hintWhen={def.resultHintWhen}
              operation={operation}
              answer={answer}
              title={titleWithName(label(name), recordName(resource, record))}
              onClose={() => {
                close();
                if (href) navigateTo(href);
              }}
            />
          ));
        else if (href) navigateTo(href);
      })
      .catch((error: unknown) => showError(error))
      .finally(() => {
        setBusy(null);
        released();
      });
  };

  const drawn = (action: AvailableAction, variant: 'button' | 'menuItem'): ReactNode => {
    const { name, def } = action;
    if (def.handler) {
      const Handler = resolveActionHandler(resource, name, def.handler);
      return (
        <Handler
          key={name}
          resource={resource}
          record={record}
          name={name}
          def={def}
          variant={variant}
        />
      );
    }
    const icon = def.icon ? <Icon name={def.icon} size={16} /> : null;
    const href = actionHref(resource, def, record);
    if (variant === 'menuItem')
      return href ? (
        <Menu.Item key={name} component={Link} to={href} leftSection={icon} data-action={name}>
          {label(name)}
        </Menu.Item>
      ) : (
        <Menu.Item
          key={name}
          leftSection={icon}
          color={def.color === 'red' ? 'red' : undefined}
          onClick={(event) => start(action, event.currentTarget)}
          data-action={name}
        >
          {label(name)}
        </Menu.Item>
      );
    return href ? (
      <Button
        key={name}
        component={Link}
        to={href}
        size={size}
        variant="default"
        leftSection={icon}
        data-action={name}
      >
        {label(name)}
      </Button>
    ) : (
      <Button
        key={name}
        size={size}
        color={def.color}
        variant="filled"
        leftSection={icon}
        loading={busy === name}
        disabled={busy !== null && busy !== name}
        onClick={(event) => start(action, event.currentTarget)}
        data-action={name}
      >
        {label(name)}
      </Button>
    );
  };

  if (menu)
    return (
      <MoreMenu
        label={t('common:actions.forRecord', { name: recordTitle(resource, record) })}
        compact
      >
        {actions.map((a) => drawn(a, 'menuItem'))}
      </MoreMenu>
    );
  const primary = actions.filter((a) => a.def.primary);
  const more = actions.filter((a) => !a.def.primary);
  return (
    <Group gap={6} wrap={compact ? 'nowrap' : 'wrap'}>
      {primary.map((a) => drawn(a, 'button'))}
      {more.length > 0 && (
        <MoreMenu
          label={t('common:actions.more', { name: recordTitle(resource, record) })}
          compact={compact}
        >
          {more.map((a) => drawn(a, 'menuItem'))}
        </MoreMenu>
      )}
    </Group>
  );
});
