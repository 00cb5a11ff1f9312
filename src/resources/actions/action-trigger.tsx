/**
 * What an action handler draws: the action as an item of the "more" menu or as a button, labelled
 * `resources:<resource>.stateActions.<name>` with the action's icon. `dialogAction` makes the
 * common handler that opens a dialog for the record (sharing, the direct link).
 */
import type { ReactNode } from 'react';
import { Button, Menu } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Icon } from '@/components/icon';
import { openActionDialog } from './action-dialogs';
import type { ActionHandler, ActionHandlerProps } from './action-registry';

export interface ActionTriggerProps extends Pick<
  ActionHandlerProps,
  'resource' | 'name' | 'def' | 'variant'
> {
  onClick: () => void;
  busy?: boolean;
}

export function ActionTrigger({ resource, name, def, variant, onClick, busy }: ActionTriggerProps) {
  const { t } = useTranslation();
  const label = t(`resources:${resource}.stateActions.${name}`);
  const icon = def.icon ? <Icon name={def.icon} size={16} /> : null;
  return variant === 'menuItem' ? (
    <Menu.Item leftSection={icon} onClick={onClick} disabled={busy} data-action={name}>
      {label}
    </Menu.Item>
  ) : (
    <Button
      size="sm"
      variant="default"
      leftSection={icon}
      onClick={onClick}
      loading={busy}
      data-action={name}
    >
      {label}
    </Button>
  );
}

/** A handler that opens the dialog `render` returns for the record (mounted outside the menu). */
export function dialogAction(
  render: (props: ActionHandlerProps, close: () => void) => ReactNode,
): ActionHandler {
  return function DialogAction(props: ActionHandlerProps) {
    return (
      <ActionTrigger {...props} onClick={() => openActionDialog((close) => render(props, close))} />
    );
  };
}
