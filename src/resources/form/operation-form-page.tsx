/**
 * The extra routes that are the generated form of an operation (`x-resource.forms`): the request
 * body's fields through the form engine, or, for an operation without a body, a confirmation (the
 * preview and one button). Around it, what the form route declares:
 * - `preview`: a read operation whose answer shows above the form (the disclaimer text, what a
 *   migration moves), through the renderer its answer names, else as item lists;
 * - `token: "query"`: the call's bearer is the page's `?token=` (a mailed link), else the stored
 *   token; a call that names token types only runs with one of them (./form-token.ts);
 * - `after`: `message` shows the done text instead of the form, `answer` shows it with the
 *   operation's answer (a code to copy), `loginCountdown` shows it, counts down and goes to the
 *   login, `continueLogin` carries the login on with the same token and goes where its answer
 *   leads (a step's token only: after a mailed link the user logs in again, after the countdown),
 *   `answerContinue` shows the answer (recovery codes shown once) and a button that then carries
 *   the login on as `continueLogin` does;
 * - without `after`, a success notice and the `then` route;
 * - `cancel: "logout"`: a second button that ends the session (rejecting the disclaimer).
 * Texts are `resources:<resource>.forms.<kind>.<intro|submit|cancel|continue|done|errors.<code>>`.
 */
import '@mantine/core/styles/Alert.css';
import { useMemo, useState } from 'react';
import { Alert, Button, Group, Stack } from '@mantine/core';
import { Link, Navigate, useLocation, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { resourceOf } from '@/generated/resources';
import { getToken } from '@/lib/token';
import { LOGIN_PATH } from '@/providers/auth-provider';
import { operationOf } from '../actions/operation-inputs';
import { formTokenState } from './form-token';
import { FormTitle } from './form-title';
import { OperationForm } from './operation-form';

export interface OperationFormPageProps {
  resource: string;
  /** The route kind (a key of the resource's `forms`). */
  kind: string;
}

export function OperationFormPage({ resource, kind }: OperationFormPageProps) {
  const { t } = useTranslation();
  const formRoute = resourceOf(resource)?.meta.forms[kind];
  if (!formRoute) throw new Error(`${resource} has no form ${kind}`);
  const op = operationOf(resource, formRoute.operation);
  const [search] = useSearchParams();
  const { pathname } = useLocation();
  const queryToken = search.get('token');
  const [openedAt] = useState(() => Date.now());
  // Decided once per link: the stored token changes when the login carries on.
  const token = useMemo(
    () =>
      formTokenState({
        operation: op,
        source: formRoute.token,
        queryToken,
        storedToken: getToken(),
        pathname,
        nowMs: openedAt,
      }),
    [op, formRoute.token, queryToken, pathname, openedAt],
  );
  if (token.kind === 'redirect') return <Navigate to={token.to} replace />;
  if (token.kind !== 'ok')
    return (
      <Stack gap="md" maw={900}>
        <FormTitle resource={resource} kind={kind} />
        <Alert color="orange" role="alert" data-testid="form-token-problem">
          {t(token.kind === 'expired' ? 'common:form.linkExpired' : 'common:form.linkMissing')}
        </Alert>
        <Group>
          <Button component={Link} to={LOGIN_PATH} variant="default">
            {t('common:form.toLogin')}
          </Button>
        </Group>
      </Stack>
    );
  return (
    <OperationForm
      key={queryToken ?? ''}
      resource={resource}
      kind={kind}
      formRoute={formRoute}
      op={op}
      token={token}
    />
  );
}
