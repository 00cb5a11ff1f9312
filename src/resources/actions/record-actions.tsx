/**
 * The actions of one record, wherever it is shown (card, table row, details page): the primary
 * ones as buttons, the rest in a "more" menu. An action calls its operation (with a confirmation
 * naming the record when the schema asks, and the recycle-bin choice when the action has a
 * permanent variant), opens its route, or hands over to a registered handler. Its dialogs (form,
 * confirmation, answer) mount in the action dialog host, so a details page can also open one from
 * its URL (`openRecordActionDialog`). After success the record is read again, the action's effect
 * runs and its `then` route opens.
 */
import '@mantine/core/styles/Menu.css';
import '@mantine/core/styles/Popover.css';
import '@mantine/core/styles/Checkbox.css';
import { lazy, memo, Suspense, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { ActionIcon, Box, Button, Checkbox, Group, Menu } from '@mantine/core';
import { useNotification } from '@refinedev/core';
import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { resourceOf } from '@/generated/resources';
import { Icon } from '@/components/icon';
import { showError } from '@/lib/error-display';
import { navigateTo } from '@/lib/navigation';
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
import { ActionResultModal } from './action-result';
import { afterActionSuccess, thenHref, useActionSuccess } from './action-success';
import { ConfirmDialog } from './confirm-dialog';

type Record = Readonly<globalThis.Record<string, unknown>>;

// The form engine loads with the first action form opened, not with every list.
const ActionFormDialog = lazy(() =>
  import('./action-form-dialog').then((m) => ({ default: m.ActionFormDialog })),
);

/** The field that names a record (x-ui.list.title, else `name`, else `username`), or its id. */
export function recordTitle(resource: string, record: Record): string {
  const field = resourceOf(resource)?.meta.list?.title ?? 'name';
  for (const key of [field, 'name', 'username']) {
    const value = record[key];
    if (typeof value === 'string' && value) return value;
  }
  return String(record.id ?? '');
}

/**
 * Calls an action's operation (or its permanent variant) for a record: the path parameters and
 * body from the record (`fill`), the action's fixed `param` and `body`. Resolves with the answer.
 */
export async function runOperation(
  resource: string,
  record: Record,
  operation: string,
  def: ActionDefinition = {},
): Promise<unknown> {
  const { params, body } = operationInputs(resource, operation, def, record);
  return requestOperation(`${resource}.${operation}`, { params, ...(body ? { body } : {}) });
}

function ConfirmActionModal({
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
    open?.({ type: 'success', message: t('common:actions.done', { action: label, name }) });
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
        operation={answer.operation}
        answer={answer.value}
        title={`${label} · ${name}`}
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
  const role = useSessionState().user?.role_id ?? null;
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

/** What a list action is about: the whole list, no record. */
const NO_RECORD: Record = Object.freeze({});

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
  exclude = [],
  include,
  onDone,
}: RecordActionsProps) {
  const { t } = useCellText();
  const role = useSessionState().user?.role_id ?? null;
  const queryClient = useQueryClient();
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

  const start = (action: AvailableAction): void => {
    if (openRecordActionDialog({ resource, record, action, onDone })) return;
    const { name, def } = action;
    if (!def.operation) return;
    setBusy(name);
    const operation = def.operation;
    runOperation(resource, record, operation, def)
      .then(async (answer) => {
        onDone?.(operation);
        await afterActionSuccess(queryClient, { resource, name, def, record, values: {}, answer });
        const href = thenHref(resource, def, record);
        if (def.result)
          openActionDialog((close) => (
            <ActionResultModal
              resource={resource}
              name={name}
              operation={operation}
              answer={answer}
              title={`${label(name)} · ${recordTitle(resource, record)}`}
              onClose={() => {
                close();
                if (href) navigateTo(href);
              }}
            />
          ));
        else if (href) navigateTo(href);
      })
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
    </Group>
  );
});
