/**
 * The bookings' `view` action (handler `bookingView`) wherever the engine draws a booking's
 * actions: a link to the calendar of the booking's item, where the booking opens.
 */
import { Button, Menu } from '@mantine/core';
import { IconEye } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import type { ActionHandlerProps } from '@/resources/actions/action-registry';
import { bookingItemHref } from './booking-href';

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value ? value : undefined;
}

export function BookingViewAction({ record, variant }: ActionHandlerProps) {
  const { t } = useTranslation();
  const itemType = text(record.item_type);
  const href = bookingItemHref({
    item_id: text(record.item_id),
    item_type: itemType === 'desktop' || itemType === 'deployment' ? itemType : undefined,
  });
  if (!href) return null;
  const label = t('resources:bookings.stateActions.view');
  return variant === 'menuItem' ? (
    <Menu.Item component={Link} to={href} leftSection={<IconEye size={16} />} data-action="view">
      {label}
    </Menu.Item>
  ) : (
    <Button
      component={Link}
      to={href}
      size="sm"
      variant="default"
      leftSection={<IconEye size={16} />}
      data-action="view"
    >
      {label}
    </Button>
  );
}
