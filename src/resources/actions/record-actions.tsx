/**
 * The actions of one record, wherever it is shown (card, table row, details page): the primary
 * ones as buttons, the rest in a "more" menu. An action calls its operation (with a confirmation
 * naming the record when the schema asks, and the recycle-bin choice when the action has a
 * permanent variant), opens its route, or hands over to a registered handler.
 */
import '@mantine/core/styles/Menu.css';
import '@mantine/core/styles/Popover.css';
import '@mantine/core/styles/Checkbox.css';
import { lazy, memo, Suspense, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { ActionIcon, Box, Button, Checkbox, Group, Menu } from '@mantine/core';
import { useNotification } from '@refinedev/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { resourceOf } from '@/generated/resources';
import { Icon } from '@/components/icon';
import { showError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import { requestOperation } from '@/providers/http-client';
import { useCellText } from '../cells/cell-registry';
import { resolveActionHandler } from './action-registry';
import type { ActionDefinition } from '@common/state-actions';
import { openActionDialog } from './action-dialogs';
import {
  actionHref,
  availableActions,
  listActions,
  type AvailableAction,
} from './available-actions';
import { operationInputs } from './operation-inputs';
import { ActionPreview } from './action-preview';
import { ConfirmDialog } from './confirm-dialog';

type Record = Readonly<globalThis.Record<string, unknown>>;

// The form engine loads with the first action form opened, not with every list.
const ActionFormDialog = lazy(() =>
  import('./action-form-dialog').then((m) => ({ default: m.ActionFormDialog })),
);

/** The field that names a record (x-ui.list.title, else `name`). */
export function recordTitle(resource: string, record: Record): string {
  const field = resourceOf(resource)?.meta.list?.title ?? 'name';
  const value = record[field];
  return typeof value === 'string' ? value : String(record.id ?? '');
}

/**
 * Calls an action's operation (or its permanent variant) for a record: the path parameters and
 * body from the record (`fill`), the action's fixed `param` and `body`.
 */
export async function runOperation(
  resource: string,
  record: Record,
  operation: string,
  def: ActionDefinition = {},
): Promise<void> {
  const { params, body } = operationInputs(resource, operation, def, record);
  await requestOperation(`${resource}.${operation}`, { params, ...(body ? { body } : {}) });
}

interface ConfirmState {
  action: AvailableAction;
}

function ConfirmActionModal({
  resource,
  name,
  action,
  record,
  run,
  onClose,
}: {
  resource: string;
  /** The record the action is about (none for list actions). */
  record?: Record;
  /** What the action is about (a record's title, or the list's). */
  name: string;
  action: AvailableAction;
  /** Calls the action (the permanent variant when asked). */
  run: (operation: string) => Promise<void>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { open } = useNotification();
  const [permanent, setPermanent] = useState(false);
  const confirm = async (): Promise<void> => {
    const operation =
      permanent && action.def.permanent ? action.def.permanent : action.def.operation;
    if (!operation) return;
    await run(operation);
    open?.({
      type: 'success',
      message: t('common:actions.done', {
        action: t(`resources:${resource}.stateActions.${action.name}`),
        name,
      }),
    });
  };
  return (
    <ConfirmDialog
      resource={resource}
      action={action.name}
      name={name}
      color={action.def.color}
      onConfirm={confirm}
      onClose={onClose}
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

export interface ListActionsProps {
  resource: string;
  /** x-ui.list.actions: actions on the whole list. */
  names: readonly string[];
}

/** Actions on the whole list (empty the recycle bin...), in the title row. */
export function ListActions({ resource, names }: ListActionsProps) {
  const { t } = useTranslation();
  const role = useSessionState().user?.role_id ?? null;
  const [confirming, setConfirming] = useState<AvailableAction | null>(null);
  const actions = listActions(resource, names, role);
  if (actions.length === 0) return null;
  const run = (operation: string) =>
    requestOperation(`${resource}.${operation}`).then(() => undefined);
  return (
    <Group gap={6}>
      {actions.map((action) => (
        <Button
          key={action.name}
          variant="default"
          color={action.def.color}
          leftSection={action.def.icon ? <Icon name={action.def.icon} size={16} /> : null}
          onClick={() =>
            action.def.confirm
              ? setConfirming(action)
              : void run(action.def.operation ?? '').catch(showError)
          }
          data-action={action.name}
        >
          {t(`resources:${resource}.stateActions.${action.name}`)}
        </Button>
      ))}
      {confirming && (
        <ConfirmActionModal
          resource={resource}
          name={t(`resources:${resource}.title`)}
          action={confirming}
          run={run}
          onClose={() => setConfirming(null)}
        />
      )}
    </Group>
  );
}

/**
 * The "more" menu of a record. Its floating menu mounts on first use (the trigger is a plain
 * button until then): thousands of cards mount fast when a filter changes what is visible.
 */
function MoreMenu({
  label,
  compact,
  children,
}: {
  label: string;
  compact: boolean;
  children: ReactNode;
}) {
  const [mounted, setMounted] = useState(false);
  const [opened, setOpened] = useState(false);
  const target = useRef<HTMLButtonElement>(null);
  // The mounted menu's trigger replaces the placeholder button: keep the keyboard focus on it.
  useEffect(() => {
    if (mounted) target.current?.focus();
  }, [mounted]);
  const trigger = {
    variant: 'subtle',
    color: 'gray',
    size: compact ? 'md' : 'lg',
    'aria-label': label,
    'data-testid': 'record-more',
  } as const;
  if (!mounted)
    return (
      <ActionIcon
        {...trigger}
        aria-haspopup="menu"
        onClick={() => {
          setMounted(true);
          setOpened(true);
        }}
      >
        <Icon name="dots" size={18} />
      </ActionIcon>
    );
  return (
    <Menu position="bottom-end" withinPortal opened={opened} onChange={setOpened}>
      <Menu.Target>
        <ActionIcon ref={target} {...trigger}>
          <Icon name="dots" size={18} />
        </ActionIcon>
      </Menu.Target>
      <Menu.Dropdown>{children}</Menu.Dropdown>
    </Menu>
  );
}

export interface RecordActionsProps {
  resource: string;
  record: Record;
  /** Compact buttons for table rows. */
  compact?: boolean;
  /** Actions not drawn here (a card that shows one action in its own place). */
  exclude?: readonly string[];
  /** Called once an action's operation (or its permanent variant) succeeded. */
  onDone?: (operation: string) => void;
}

/** Primary actions as buttons, the others in a "more" menu. */
export const RecordActions = memo(function RecordActions({
  resource,
  record,
  compact = false,
  exclude = [],
  onDone,
}: RecordActionsProps) {
  const { t } = useCellText();
  const role = useSessionState().user?.role_id ?? null;
  const [confirming, setConfirming] = useState<ConfirmState | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const actions = useMemo(
    () => availableActions(resource, record, role).filter((a) => !exclude.includes(a.name)),
    [resource, record, role, exclude],
  );
  if (actions.length === 0) return null;
  const size = compact ? 'compact-sm' : 'sm';
  const label = (name: string) => t(`resources:${resource}.stateActions.${name}`);

  const start = (action: AvailableAction): void => {
    if (action.def.form) {
      openActionDialog((close) => (
        <Suspense fallback={null}>
          <ActionFormDialog
            resource={resource}
            record={record}
            name={action.name}
            def={action.def}
            title={recordTitle(resource, record)}
            onClose={close}
          />
        </Suspense>
      ));
      return;
    }
    if (action.def.confirm || action.def.permanent) {
      setConfirming({ action });
      return;
    }
    if (!action.def.operation) return;
    setBusy(action.name);
    const operation = action.def.operation;
    runOperation(resource, record, operation, action.def)
      .then(() => onDone?.(operation))
      .catch((error: unknown) => showError(error))
      .finally(() => setBusy(null));
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
          onClick={() => start(action)}
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
        onClick={() => start(action)}
        data-action={name}
      >
        {label(name)}
      </Button>
    );
  };

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
      {/* Mounted only while confirming: thousands of cards must not each hold a closed modal. */}
      {confirming && (
        <ConfirmActionModal
          resource={resource}
          name={recordTitle(resource, record)}
          action={confirming.action}
          record={record}
          run={(operation) =>
            runOperation(resource, record, operation, confirming.action.def).then(() =>
              onDone?.(operation),
            )
          }
          onClose={() => setConfirming(null)}
        />
      )}
    </Group>
  );
});
