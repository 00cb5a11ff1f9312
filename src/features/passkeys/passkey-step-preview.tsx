/**
 * The `passkeyStep` preview of the second login step: when the step's user has a passkey, a
 * "Use a passkey" button above the code form. It runs the authentication ceremony (the step's
 * options, navigator.credentials.get() through @simplewebauthn/browser, loaded only here, the
 * signature sent back) and carries the login on with the step token. The code form stays below
 * for an authenticator app or a recovery code.
 */
import '@mantine/core/styles/Alert.css';
import { useEffect, useState } from 'react';
import { Alert, Button, Stack, Text } from '@mantine/core';
import { useNavigate } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { WebAuthnAssertion, SessionUserSecondFactorMethods } from '@/generated/types';
import type { DisplayableError } from '@/lib/error-display';
import { getToken } from '@/lib/token';
import { continueLogin, LOGIN_PATH } from '@/providers/auth-provider';
import { request, requestOperation } from '@/providers/http-client';
import type { PreviewProps } from '@/resources/form/preview-registry';
import { isRequestOptions, loadWebAuthn } from './webauthn';
import { passkeyFailureText } from './passkey-failure';

const TEXTS = 'resources:session.forms.secondFactor';

/** Signs the step's challenge with a passkey and passes the step; the token it passed. */
async function passStep(): Promise<string> {
  const token = getToken() ?? '';
  const [options, { startAuthentication }] = await Promise.all([
    requestOperation('session.passkeyOptions', { body: {}, token }),
    loadWebAuthn(),
  ]);
  // A locked step answers 429, which resolves empty.
  if (!isRequestOptions(options)) throw { error: 'too_many_requests' } satisfies DisplayableError;
  const answer = await startAuthentication({ optionsJSON: options });
  const body: WebAuthnAssertion = {
    response: {
      id: answer.id,
      rawId: answer.rawId,
      type: 'public-key',
      clientExtensionResults: {},
      ...(answer.authenticatorAttachment
        ? { authenticatorAttachment: answer.authenticatorAttachment }
        : {}),
      response: {
        clientDataJSON: answer.response.clientDataJSON,
        authenticatorData: answer.response.authenticatorData,
        signature: answer.response.signature,
        ...(answer.response.userHandle ? { userHandle: answer.response.userHandle } : {}),
      },
    },
  };
  await request('session.verifyPasskey', { body, token });
  return token;
}

export function PasskeyStepPreview({ value }: PreviewProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const methods = (value ?? {}) as Partial<SessionUserSecondFactorMethods>;
  const hasPasskey = methods.passkey === true;
  useEffect(() => {
    // Fetched ahead while the user reads the page: the ceremony starts at once on click.
    if (hasPasskey) void loadWebAuthn();
  }, [hasPasskey]);
  if (!hasPasskey) return null;

  const failureText = (error: unknown): string => passkeyFailureText(t, TEXTS, error);
  const use = (): void => {
    setBusy(true);
    setFailure(null);
    passStep()
      .then(async (token) => {
        const result = await continueLogin(token);
        if (result.categories) await navigate(LOGIN_PATH, { replace: true });
        else if (result.success && result.redirectTo)
          await navigate(result.redirectTo, { replace: true });
        else throw result.error ?? new Error('login');
      })
      .catch((error: unknown) => {
        setFailure(failureText(error));
        setBusy(false);
      });
  };
  return (
    <Stack gap="xs" data-testid="passkey-step">
      <Button onClick={use} loading={busy} data-testid="use-passkey">
        {t(`${TEXTS}.usePasskey`)}
      </Button>
      {failure && (
        <Alert color="red" role="alert">
          {failure}
        </Alert>
      )}
      <Text size="sm" c="dimmed">
        {t(methods.totp ? `${TEXTS}.orCode` : `${TEXTS}.orRecoveryCode`)}
      </Text>
    </Stack>
  );
}
