/**
 * The `enrolPasskey` action handler (the passkeys list's "Add a passkey"): a dialog asks the
 * passkey's name, then the registration ceremony runs: the server's options, the browser's
 * navigator.credentials.create() (through @simplewebauthn/browser, loaded now), and the answer
 * sent back with the name. The list and the profile are read again afterwards; the user's first
 * second factor also shows its recovery codes, once, until the dialog is closed.
 */
import '@mantine/core/styles/Alert.css';
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useState } from 'react';
import { Alert, Button, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import type { PasskeyRegistered } from '@/generated/types';
import { showError } from '@/lib/error-display';
import { resourceKeyPrefix } from '@/providers/live-provider';
import { request, requestOperation } from '@/providers/http-client';
import type { ActionHandlerProps } from '@/resources/actions/action-registry';
import { openActionDialog } from '@/resources/actions/action-dialogs';
import { ActionTrigger } from '@/resources/actions/action-trigger';
import { AnswerView } from '@/resources/form/answer-view';
import { createPasskey, loadWebAuthn } from './webauthn';

/**
 * Runs the registration ceremony and stores the passkey under `name`: the recovery codes the
 * user's first second factor gets, else none.
 */
export async function enrolPasskey(name: string): Promise<string[] | null> {
  const [options] = await Promise.all([
    requestOperation('passkeys.registrationOptions', { body: {} }),
    loadWebAuthn(),
  ]);
  const answer = (await request('passkeys.register', {
    body: await createPasskey(options, name),
  })) as Partial<PasskeyRegistered> | undefined;
  return answer?.recovery_codes ?? null;
}

/** The recovery codes of a first second factor, shown once, until the user closes the dialog. */
function RecoveryCodes({ codes, onClose }: { codes: string[]; onClose: () => void }) {
  const { t } = useTranslation();
  return (
    <Stack gap="sm" data-testid="passkey-recovery-codes">
      <Alert color="green" role="status">
        {t('resources:passkeys.enrol.recoveryCodes')}
      </Alert>
      <AnswerView
        resource="profile"
        type="ProfileRecoveryCodes"
        value={{ recovery_codes: codes }}
      />
      <Group justify="flex-end">
        <Button onClick={onClose} data-testid="passkey-codes-done">
          {t('common:actions.close')}
        </Button>
      </Group>
    </Stack>
  );
}

function EnrolDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [name, setName] = useState(() => t('resources:passkeys.enrol.defaultName'));
  const [busy, setBusy] = useState(false);
  const [codes, setCodes] = useState<string[] | null>(null);
  const submit = (): void => {
    setBusy(true);
    enrolPasskey(name.trim())
      .then((recoveryCodes) => {
        void queryClient.invalidateQueries({ queryKey: resourceKeyPrefix('passkeys') });
        void queryClient.invalidateQueries({ queryKey: resourceKeyPrefix('profile') });
        if (recoveryCodes) setCodes(recoveryCodes);
        else onClose();
      })
      .catch((error: unknown) => {
        showError(error);
        setBusy(false);
      });
  };
  return (
    <Modal opened onClose={onClose} title={t('resources:passkeys.stateActions.enrol')} centered>
      {codes ? (
        <RecoveryCodes codes={codes} onClose={onClose} />
      ) : (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            submit();
          }}
        >
          <Stack gap="sm">
            <Text size="sm">{t('resources:passkeys.enrol.intro')}</Text>
            <TextInput
              label={t('resources:passkeys.fields.name')}
              value={name}
              onChange={(event) => setName(event.currentTarget.value)}
              maxLength={64}
              required
              data-autofocus
            />
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose} disabled={busy}>
                {t('common:actions.cancel')}
              </Button>
              <Button
                type="submit"
                loading={busy}
                disabled={!name.trim()}
                data-testid="passkey-create"
              >
                {t('resources:passkeys.enrol.submit')}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}

export function EnrolPasskeyAction(props: ActionHandlerProps) {
  const open = (): void => {
    openActionDialog((close) => <EnrolDialog onClose={close} />);
  };
  return <ActionTrigger {...props} onClick={open} />;
}
