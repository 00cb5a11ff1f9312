/**
 * The desktops' `directLink` action (handler `directLinkModal`): opens the direct link modal for
 * the record, as a card's menu item or a button.
 */
import { dialogAction } from '@/resources/actions/action-trigger';
import { recordTitle } from '@/resources/actions/record-actions';
import { DirectLinkModal } from './direct-link-modal';

export const DirectLinkAction = dialogAction(({ resource, record }, close) => (
  <DirectLinkModal
    id={String(record.id ?? '')}
    name={recordTitle(resource, record)}
    onClose={close}
  />
));
