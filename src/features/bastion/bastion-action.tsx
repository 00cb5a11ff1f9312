/**
 * The desktops' `bastion` action (handler `bastionModal`): opens the bastion modal for the record;
 * offered only when the user's config says `can_use_bastion`.
 */
import { openActionDialog } from '@/resources/actions/action-dialogs';
import type { ActionHandlerProps } from '@/resources/actions/action-registry';
import { ActionTrigger } from '@/resources/actions/action-trigger';
import { recordTitle } from '@/resources/actions/record-actions';
import { useSessionValue, type SessionState } from '@/lib/session-state';

const bastionAllowed = (s: SessionState) => s.config?.can_use_bastion === true;
import { BastionModal } from './bastion-modal';

export function BastionAction(props: ActionHandlerProps) {
  const allowed = useSessionValue(bastionAllowed);
  if (!allowed) return null;
  const { resource, record } = props;
  return (
    <ActionTrigger
      {...props}
      onClick={() =>
        openActionDialog((close) => (
          <BastionModal
            id={String(record.id ?? '')}
            name={recordTitle(resource, record)}
            onClose={close}
          />
        ))
      }
    />
  );
}
