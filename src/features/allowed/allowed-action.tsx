/**
 * The `allowed` action of shared items (handler `allowedModal`): opens the allowed users and
 * groups modal for the record. The action's `param.table` names the sharing table of the
 * resource (`domains` for templates, `media`, `deployments`).
 */
import type { AllowedTableParams } from '@/generated/types';
import { dialogAction } from '@/resources/actions/action-trigger';
import { recordTitle } from '@/resources/actions/record-actions';
import { AllowedModal } from './allowed-modal';

const TABLES: readonly AllowedTableParams['table'][] = ['domains', 'media', 'deployments'];

function tableOf(resource: string, param: Readonly<Record<string, string>> | undefined) {
  const table = TABLES.find((name) => name === param?.table);
  if (!table)
    throw new Error(`${resource}.allowed needs param.table (one of ${TABLES.join(', ')})`);
  return table;
}

export const AllowedAction = dialogAction(({ resource, record, def }, close) => (
  <AllowedModal
    table={tableOf(resource, def.param)}
    id={String(record.id ?? '')}
    name={recordTitle(resource, record)}
    onClose={close}
  />
));
