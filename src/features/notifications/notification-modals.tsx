/**
 * The server's notifications, one at a time: a modal, or a full-screen one for the `fullpage`
 * display. A notification that must be accepted has no close button and stays until Accept.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import '@mantine/core/styles/Typography.css';
import { Box, Button, Group, Modal, Typography } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { sanitizeHtml } from '@/lib/safe-html';
import { closeCurrentNotification, useUserNotifications } from './user-notifications';

/**
 * HTML of a notification. Only the body and footer of server notifications come here: the server
 * sanitises them to a few formatting tags and `sanitizeHtml` applies the same allow-list again,
 * which is why this is the one place that sets inner HTML.
 */
function ServerHtml({ html, testId }: { html: string; testId: string }) {
  if (!html) return null;
  return (
    <Typography>
      <Box data-testid={testId} dangerouslySetInnerHTML={{ __html: sanitizeHtml(html) }} />
    </Typography>
  );
}

export function NotificationModals() {
  const { t } = useTranslation();
  const { queue } = useUserNotifications();
  const current = queue[0];
  if (!current) return null;
  const forced = current.forceAccept;
  return (
    <Modal
      key={current.key}
      opened
      onClose={() => {
        if (!forced) closeCurrentNotification();
      }}
      title={current.title}
      centered
      size="lg"
      fullScreen={current.display === 'fullpage'}
      withCloseButton={!forced}
      closeOnClickOutside={!forced}
      closeOnEscape={!forced}
      data-testid="notification-modal"
      data-display={current.display}
      data-forced={String(forced)}
    >
      <ServerHtml html={current.body} testId="notification-body" />
      <ServerHtml html={current.footer} testId="notification-footer" />
      <Group justify="flex-end" mt="md">
        <Button onClick={closeCurrentNotification} data-testid="notification-accept">
          {t(forced ? 'common:notifications.accept' : 'common:actions.close')}
        </Button>
      </Group>
    </Modal>
  );
}
