/**
 * The desktops' `open` action (handler `openDesktop`): the one-click Open with its "Open with"
 * menu, drawn where the engine places the record's primary actions.
 */
import type { ActionHandlerProps } from '@/resources/actions/action-registry';
import { isDesktop } from '@/lib/records';
import { OpenDesktopMenu } from './open-desktop-menu';

export function OpenDesktopAction({ record }: ActionHandlerProps) {
  return isDesktop(record) ? <OpenDesktopMenu desktop={record} /> : null;
}
