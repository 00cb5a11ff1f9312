/**
 * The `allowed` action of shared items (handler `allowedModal`): opens the allowed users and
 * groups modal for the record. The action's `param.table` names the sharing table of the
 * resource (`domains` for templates, `media`, `deployments`).
 */
import { Button, Menu } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { AllowedTableParams } from '@/generated/types';
import { Icon } from '@/components/icon';
import type { ActionHandlerProps } from '@/resources/actions/action-registry';
import { openActionDialog } from '@/resources/actions/action-dialogs';
import { recordTitle } from '@/resources/actions/record-actions';
import { AllowedModal } from './allowed-modal';

const TABLES: readonly AllowedTableParams['table'][] = ['domains', 'media', 'deployments'];

function tableOf(resource: string, param: Readonly<Record<string, string>> | undefined) {
  const table = TABLES.find((name) => name === param?.table);
  if (!table)
    throw new Error(`${resource}.allowed needs param.table (one of ${TABLES.join(', ')})`);
  return table;
}

export function AllowedAction({ resource, record, name, def, variant }: ActionHandlerProps) {
  const { t } = useTranslation();
  const table = tableOf(resource, def.param);
  const label = t(`resources:${resource}.stateActions.${name}`);
  const icon = <Icon name={def.icon ?? 'users'} size={16} />;
  const show = () =>
    openActionDialog((close) => (
      <AllowedModal
        table={table}
        id={String(record.id ?? '')}
        name={recordTitle(resource, record)}
        onClose={close}
      />
    ));
  return variant === 'menuItem' ? (
    <Menu.Item leftSection={icon} onClick={show} data-action={name}>
      {label}
    </Menu.Item>
  ) : (
    <Button size="sm" variant="default" leftSection={icon} onClick={show} data-action={name}>
      {label}
    </Button>
  );
}
