/**
 * The `passkeyEnrolment` preview of the enrolment a policy forces at the login: the authenticator
 * app's secret (the form below confirms it with a code) and, beside it, "Use a passkey". That runs
 * the registration ceremony with the step token (the step's options, navigator.credentials.create()
 * through @simplewebauthn/browser, the passkey sent back), then shows the recovery codes once, in
 * a dialog that only continues the login with the same token, as after the app's enrolment.
 */
import '@mantine/core/styles/Alert.css';
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useEffect, useState } from 'react';
import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import { getToken } from '@/lib/token';
import { continueLogin, LOGIN_PATH } from '@/providers/auth-provider';
import { request, requestOperation } from '@/providers/http-client';
import { AnswerView } from '@/resources/form/answer-view';
import type { PreviewProps } from '@/resources/form/preview-registry';
import { createPasskey, loadWebAuthn } from './webauthn';
import { passkeyFailureText } from './passkey-failure';

const TEXTS = 'resources:session.forms.secondFactorEnrolment';

/** Registers a passkey with the step token; the recovery codes it answers. */
async function enrolWithPasskey(name: string): Promise<unknown> {
  const token = getToken() ?? '';
  const [options] = await Promise.all([
    requestOperation('session.enrolmentPasskeyOptions', { body: {}, token }),
    loadWebAuthn(),
  ]);
  const body = await createPasskey(options, name);
  return request('session.confirmPasskeyEnrolment', { body, token });
}

export function PasskeyEnrolmentPreview({ resource, type, value }: PreviewProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [codes, setCodes] = useState<unknown>(null);
  useEffect(() => {
    // Fetched ahead while the user reads the page: the ceremony starts at once on click.
    void loadWebAuthn();
  }, []);

  const failureText = (error: unknown): string => passkeyFailureText(t, TEXTS, error);
  const use = (): void => {
    setBusy(true);
    setFailure(null);
    enrolWithPasskey(t('resources:passkeys.enrol.defaultName'))
      .then(setCodes)
      .catch((error: unknown) => {
        setFailure(failureText(error));
        setBusy(false);
      });
  };
  const carryOn = (): void => {
    continueLogin(getToken() ?? '')
      .then(async (result) => {
        if (result.categories) await navigate(LOGIN_PATH, { replace: true });
        else if (result.success && result.redirectTo)
          await navigate(result.redirectTo, { replace: true });
        else throw result.error ?? new Error('login');
      })
      .catch((error: unknown) => {
        setCodes(null);
        setFailure(failureText(error));
        setBusy(false);
      });
  };

  return (
    <Stack gap="sm">
      {type && <AnswerView resource={resource} type={type} value={value} />}
      <Stack gap="xs" data-testid="passkey-enrolment">
        <Text size="sm" c="dimmed">
          {t(`${TEXTS}.orPasskey`)}
        </Text>
        <Group>
          <Button variant="light" onClick={use} loading={busy} data-testid="enrol-passkey">
            {t(`${TEXTS}.usePasskey`)}
          </Button>
        </Group>
        {failure && (
          <Alert color="red" role="alert">
            {failure}
          </Alert>
        )}
      </Stack>
      <Modal
        opened={codes !== null}
        onClose={carryOn}
        withCloseButton={false}
        closeOnClickOutside={false}
        closeOnEscape={false}
        title={t(`${TEXTS}.passkeyTitle`)}
        centered
      >
        <Stack gap="sm" data-testid="passkey-enrolment-done">
          <Alert color="green" role="status">
            {t(`${TEXTS}.passkeyDone`)}
          </Alert>
          <AnswerView resource="profile" type="ProfileRecoveryCodes" value={codes} />
          <Group justify="flex-end">
            <Button onClick={carryOn} data-testid="form-continue">
              {t(`${TEXTS}.continue`)}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
