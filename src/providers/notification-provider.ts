/** refine notification provider on Mantine notifications: top centre, 2000 ms. */
import type { NotificationProvider } from '@refinedev/core';
import { notifications } from '@mantine/notifications';

export const TOAST_MS = 2000;

export const notificationProvider: NotificationProvider = {
  open: ({ key, message, description, type }) => {
    notifications.show({
      ...(key ? { id: key } : {}),
      title: description ? message : undefined,
      message: description ?? message,
      color: type === 'error' ? 'red' : type === 'success' ? 'green' : 'blue',
      position: 'top-center',
      autoClose: TOAST_MS,
    });
  },
  close: (key) => notifications.hide(key),
};
