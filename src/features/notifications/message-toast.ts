/**
 * The `msg` socket event as a toast: `common:messages.<msg_code>` with the event's params
 * interpolated (a `date` shown as local YYYY-MM-DD HH:mm), coloured by its type (info, warning,
 * danger), removed after the notification toast time. Unknown codes fall back to a generic text.
 */
import i18next, { type i18n as I18n } from 'i18next';
import { notifications } from '@mantine/notifications';
import { constants } from '@/generated/constants';
import type { SocketEventsMessage } from '@/generated/types';
import { formatDate } from '@/lib/dates';

/** How long a message toast stays (the spec's notification toasts). */
export const MESSAGE_TOAST_MS = constants.notifications.toastMs.value;

const COLORS: Readonly<Record<string, string>> = {
  info: 'blue',
  warning: 'orange',
  danger: 'red',
  success: 'green',
};

/** The message's text in the interface language. */
export function messageText(message: SocketEventsMessage, i18n: I18n = i18next): string {
  const params: Record<string, unknown> = { ...(message.params ?? {}) };
  if (typeof params.date === 'string' || typeof params.date === 'number')
    params.date = formatDate(params.date);
  const key = `common:messages.${message.msg_code}`;
  return i18n.exists(key)
    ? i18n.t(key, params)
    : i18n.t('common:messages.unknown', { ...params, code: message.msg_code });
}

/** The Mantine colour of a message type (grey for none or an unknown one). */
export function messageColor(type: string | null | undefined): string {
  return COLORS[type ?? ''] ?? 'gray';
}

/** Shows one `msg` event as a toast. */
export function showMessageToast(message: SocketEventsMessage): void {
  notifications.show({
    message: messageText(message),
    color: messageColor(message.type),
    position: 'top-center',
    autoClose: MESSAGE_TOAST_MS,
    withCloseButton: true,
  });
}
