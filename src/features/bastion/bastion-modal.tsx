/**
 * The bastion of a desktop (`GET /desktop/bastion/{id}`, made with the defaults at the first
 * read): HTTP access (on/off, its HTTP and HTTPS ports, a custom domain when the config allows
 * individual domains) and SSH access (on/off, its port, the authorized keys, one per line), with
 * the address and the SSH command to reach it. Saved with `PUT /desktop/bastion/{id}`; empty
 * ports take the defaults (80, 443, 22).
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
  Code,
  Fieldset,
  Group,
  Modal,
  NumberInput,
  Skeleton,
  Stack,
  Switch,
  Text,
  TextInput,
  Textarea,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { defaults } from '@/generated/constants';
import type { Bastion, BastionUpdate } from '@/generated/types';
import { showError, showInfo, translateError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import { request } from '@/providers/http-client';
import { httpUrl, keysOf, sshCommand } from './bastion-access';

export interface BastionModalProps {
  /** The desktop's id. */
  id: string;
  /** The desktop's name, in the title. */
  name: string;
  onClose: () => void;
}

interface Draft {
  httpEnabled: boolean;
  httpPort: number | '';
  httpsPort: number | '';
  domain: string;
  sshEnabled: boolean;
  sshPort: number | '';
  keys: string;
}

const draftOf = (target: Bastion): Draft => ({
  httpEnabled: target.http.enabled,
  httpPort: target.http.http_port,
  httpsPort: target.http.https_port,
  domain: target.domain ?? '',
  sshEnabled: target.ssh.enabled,
  sshPort: target.ssh.port,
  keys: target.ssh.authorized_keys.join('\n'),
});

const portOr = (value: number | '', fallback: number) => (value === '' ? fallback : value);

function bodyOf(draft: Draft, withDomain: boolean): BastionUpdate {
  return {
    http: {
      enabled: draft.httpEnabled,
      http_port: portOr(draft.httpPort, defaults.BastionHttp.http_port),
      https_port: portOr(draft.httpsPort, defaults.BastionHttp.https_port),
    },
    ssh: {
      enabled: draft.sshEnabled,
      port: portOr(draft.sshPort, defaults.BastionSsh.port),
      authorized_keys: keysOf(draft.keys),
    },
    ...(withDomain ? { domain: draft.domain.trim() || null } : {}),
  };
}

const toPort = (value: string | number): number | '' =>
  typeof value === 'number' ? value : value === '' ? '' : Number(value);

export function BastionModal({ id, name, onClose }: BastionModalProps) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const config = useSessionState().config;
  const key = ['bastion', id];
  const target = useQuery({
    queryKey: key,
    queryFn: () => request('bastion.show', { params: { id } }),
    staleTime: 0,
    gcTime: 0,
  });
  /** What the user changed, over the stored target. */
  const [edits, setEdits] = useState<Partial<Draft>>({});
  const [busy, setBusy] = useState(false);
  const draft: Draft | null = target.data ? { ...draftOf(target.data), ...edits } : null;
  const set = (patch: Partial<Draft>) => setEdits((e) => ({ ...e, ...patch }));
  const individual = config?.can_use_bastion_individual_domains === true;

  const save = async () => {
    if (!draft) return;
    setBusy(true);
    try {
      await request('bastion.update', { params: { id }, body: bodyOf(draft, individual) });
      await client.invalidateQueries({ queryKey: key });
      showInfo(t('common:bastion.saved'));
      onClose();
    } catch (failure) {
      showError(failure);
    } finally {
      setBusy(false);
    }
  };

  const address = target.data && {
    targetId: target.data.id,
    domain: target.data.domain,
    bastionDomain: config?.bastion_domain,
    sshPort: config?.bastion_ssh_port,
    httpPort: config?.http_port,
    pageHost: window.location.hostname,
  };

  return (
    <Modal
      opened
      onClose={onClose}
      title={t('common:bastion.title', { name })}
      size="lg"
      centered
      data-testid="bastion-modal"
    >
      {target.isError ? (
        <Alert color="red" role="alert">
          {translateError(target.error as never)}
        </Alert>
      ) : !draft || !address ? (
        <Stack gap="sm" aria-busy="true" aria-label={t('common:loading')}>
          <Skeleton height={20} />
          <Skeleton height={36} />
        </Stack>
      ) : (
        <Stack gap="md">
          <Text size="sm">{t('common:bastion.intro')}</Text>
          <Fieldset legend={t('common:bastion.http')}>
            <Stack gap="sm">
              <Switch
                checked={draft.httpEnabled}
                onChange={(e) => set({ httpEnabled: e.currentTarget.checked })}
                label={t('common:bastion.httpEnabled')}
                data-testid="bastion-http-enabled"
              />
              <Group grow>
                <NumberInput
                  label={t('common:bastion.httpPort')}
                  min={1}
                  max={65535}
                  step={1}
                  allowDecimal={false}
                  placeholder="80"
                  value={draft.httpPort}
                  onChange={(v) => set({ httpPort: toPort(v) })}
                />
                <NumberInput
                  label={t('common:bastion.httpsPort')}
                  min={1}
                  max={65535}
                  step={1}
                  allowDecimal={false}
                  placeholder="443"
                  value={draft.httpsPort}
                  onChange={(v) => set({ httpsPort: toPort(v) })}
                />
              </Group>
              {individual && (
                <TextInput
                  label={t('common:bastion.domain')}
                  description={t('common:bastion.domainHint', {
                    target: `${target.data?.id ?? ''}.${config?.bastion_domain ?? ''}`,
                  })}
                  value={draft.domain}
                  onChange={(e) => set({ domain: e.currentTarget.value })}
                  data-testid="bastion-domain"
                />
              )}
              {draft.httpEnabled && httpUrl(address) && (
                <Text size="sm">
                  {t('common:bastion.httpAddress')} <Code>{httpUrl(address)}</Code>
                </Text>
              )}
            </Stack>
          </Fieldset>
          <Fieldset legend={t('common:bastion.ssh')}>
            <Stack gap="sm">
              <Switch
                checked={draft.sshEnabled}
                onChange={(e) => set({ sshEnabled: e.currentTarget.checked })}
                label={t('common:bastion.sshEnabled')}
                data-testid="bastion-ssh-enabled"
              />
              <NumberInput
                label={t('common:bastion.sshPort')}
                min={1}
                max={65535}
                step={1}
                allowDecimal={false}
                placeholder="22"
                value={draft.sshPort}
                onChange={(v) => set({ sshPort: toPort(v) })}
              />
              <Textarea
                label={t('common:bastion.keys')}
                description={t('common:bastion.keysHint')}
                autosize
                minRows={3}
                value={draft.keys}
                onChange={(e) => set({ keys: e.currentTarget.value })}
                data-testid="bastion-keys"
              />
              {draft.sshEnabled && (
                <Text size="sm">
                  {t('common:bastion.sshCommand')}{' '}
                  <Code data-testid="bastion-ssh-command">{sshCommand(address)}</Code>
                </Text>
              )}
            </Stack>
          </Fieldset>
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              {t('common:bastion.cancel')}
            </Button>
            <Button onClick={() => void save()} loading={busy} data-testid="bastion-save">
              {t('common:bastion.save')}
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
