/**
 * The direct link of a desktop, for those who manage it: whether it has one
 * (`GET /desktop/jumperurl/{id}`), a switch to make one or remove it, and "Reset link" (after a
 * confirmation: the old link stops working at once). A new link (`PUT /desktop/jumperurl_reset`)
 * is shown in full with a copy button only in the answer that made it: the server keeps a hash of
 * it alone, so it can not be shown again.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import '@mantine/core/styles/Switch.css';
import '@mantine/core/styles/Skeleton.css';
import { useState } from 'react';
import {
  Alert,
  Button,
  CopyButton,
  Group,
  Modal,
  Skeleton,
  Stack,
  Switch,
  Text,
  TextInput,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Icon } from '@/components/icon';
import { showError, translateError } from '@/lib/error-display';
import { fetchLinkEnabled, isRateLimited, linkUrl, resetLink } from './direct-viewer-api';

export interface DirectLinkModalProps {
  /** The desktop's id. */
  id: string;
  /** The desktop's name, in the title. */
  name: string;
  onClose: () => void;
}

/** Shows a failed call: throttled calls as such, others through the error catalogue. */
function showFailure(error: unknown): void {
  showError(isRateLimited(error) ? { description_code: 'too_many_requests' } : error);
}

export function DirectLinkModal({ id, name, onClose }: DirectLinkModalProps) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const key = ['direct-link', id];
  const enabled = useQuery({
    queryKey: key,
    queryFn: () => fetchLinkEnabled(id),
    staleTime: 0,
    gcTime: 0,
  });
  /** The link made in this modal: shown until the modal closes, then never again. */
  const [url, setUrl] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);

  const change = async (disabled: boolean): Promise<void> => {
    setBusy(true);
    try {
      const token = await resetLink(id, disabled);
      setUrl(token ? linkUrl(token) : null);
      client.setQueryData(key, !disabled);
      setConfirming(false);
    } catch (failure) {
      showFailure(failure);
    } finally {
      setBusy(false);
    }
  };

  const on = enabled.data === true;

  return (
    <Modal
      opened
      onClose={onClose}
      title={t('common:directViewer.link.title', { name })}
      size="lg"
      centered
      data-testid="direct-link-modal"
    >
      {enabled.isError ? (
        <Alert color="red" role="alert">
          {isRateLimited(enabled.error)
            ? t('common:directViewer.rateLimitedBody')
            : translateError(enabled.error as never)}
        </Alert>
      ) : enabled.data === undefined ? (
        <Stack gap="sm" aria-busy="true" aria-label={t('common:loading')}>
          <Skeleton height={20} />
          <Skeleton height={36} width="50%" />
        </Stack>
      ) : (
        <Stack gap="md">
          <Text size="sm">{t('common:directViewer.link.intro')}</Text>
          <Switch
            checked={on}
            disabled={busy}
            onChange={(event) => void change(!event.currentTarget.checked)}
            label={t('common:directViewer.link.enabled')}
            description={
              on ? t('common:directViewer.link.onHint') : t('common:directViewer.link.offHint')
            }
            data-testid="direct-link-enabled"
          />
          {on && url && (
            <Stack gap={4}>
              <Group gap="xs" wrap="nowrap" align="flex-end">
                <TextInput
                  readOnly
                  value={url}
                  label={t('common:directViewer.link.url')}
                  onFocus={(event) => event.currentTarget.select()}
                  style={{ flex: 1 }}
                  data-testid="direct-link-url"
                />
                <CopyButton value={url}>
                  {({ copied, copy }) => (
                    <Button
                      variant={copied ? 'light' : 'default'}
                      color={copied ? 'green' : undefined}
                      leftSection={<Icon name={copied ? 'check' : 'copy'} size={16} />}
                      onClick={copy}
                      data-testid="direct-link-copy"
                    >
                      {copied
                        ? t('common:directViewer.link.copied')
                        : t('common:directViewer.link.copy')}
                    </Button>
                  )}
                </CopyButton>
              </Group>
              <Text size="sm" c="dimmed" data-testid="direct-link-once">
                {t('common:directViewer.link.shownOnce')}
              </Text>
            </Stack>
          )}
          {on && !url && (
            <Text size="sm" c="dimmed" data-testid="direct-link-hidden">
              {t('common:directViewer.link.hidden')}
            </Text>
          )}
          {on && confirming && (
            <Alert color="orange" role="alertdialog" data-testid="direct-link-reset-confirm">
              <Stack gap="sm">
                <Text size="sm">{t('common:directViewer.link.resetConfirm')}</Text>
                <Group gap="sm" justify="flex-end">
                  <Button variant="default" onClick={() => setConfirming(false)} disabled={busy}>
                    {t('common:actions.cancel')}
                  </Button>
                  <Button
                    color="orange"
                    loading={busy}
                    onClick={() => void change(false)}
                    data-testid="direct-link-reset-yes"
                  >
                    {t('common:directViewer.link.reset')}
                  </Button>
                </Group>
              </Stack>
            </Alert>
          )}
          <Group justify="space-between">
            {on && !confirming ? (
              <Button
                variant="light"
                color="orange"
                leftSection={<Icon name="refresh" size={16} />}
                disabled={busy}
                onClick={() => setConfirming(true)}
                data-testid="direct-link-reset"
              >
                {t('common:directViewer.link.reset')}
              </Button>
            ) : (
              <span />
            )}
            <Button variant="default" onClick={onClose} data-testid="direct-link-close">
              {t('common:directViewer.link.close')}
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
