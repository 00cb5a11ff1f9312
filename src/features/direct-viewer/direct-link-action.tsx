/**
 * The desktops' `directLink` action (handler `directLinkModal`): opens the direct link modal for
 * the record, as a card's menu item or a button.
 */
import { Button, Menu } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Icon } from '@/components/icon';
import type { ActionHandlerProps } from '@/resources/actions/action-registry';
import { openActionDialog } from '@/resources/actions/action-dialogs';
import { recordTitle } from '@/resources/actions/record-actions';
import { DirectLinkModal } from './direct-link-modal';

export function DirectLinkAction({ resource, record, name, def, variant }: ActionHandlerProps) {
  const { t } = useTranslation();
  const label = t(`resources:${resource}.stateActions.${name}`);
  const icon = <Icon name={def.icon ?? 'link'} size={16} />;
  const show = () =>
    openActionDialog((close) => (
      <DirectLinkModal
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
