import '@mantine/core/styles/Alert.css';
import { useState, type ReactNode } from 'react';
import { Alert, Anchor, Button, Group, Loader, Stack, Text } from '@mantine/core';
import { useNotification } from '@refinedev/core';
import { useQuery } from '@tanstack/react-query';
import type { FieldValues } from 'react-hook-form';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { Operation } from '@/generated/api';
import { formExtensions } from '@/generated/fields';
import { formValidators } from '@/generated/form-validators';
import { resourceOf, type FormRoute } from '@/generated/resources';
import { SubmitButton } from '@/components/submit-button';
import type { DisplayableError } from '@/lib/error-display';
import { HOME_PATH } from '@/lib/paths';
import { tokenType } from '@/lib/token';
import { continueLogin, continuesLogin, LOGIN_PATH, logout } from '@/providers/auth-provider';
import { requestOperation } from '@/providers/http-client';
import { routeHref, routeTarget } from '../actions/available-actions';
import { operationOf } from '../actions/operation-inputs';
import { resolveFormExtension } from './form-extension-registry';
import { FormSkeleton, missingHidden, NO_EXTENSION, SchemaFormBody } from './form-body';
import type { FormTokenState } from './form-token';
import { resolvePreview } from './preview-registry';
import { AnswerView } from './answer-view';
import { useStaysTrue } from './use-stays-true';
import { FormTitle } from './form-title';
import { LoginCountdown } from './login-countdown';
import { optionalText } from '@/i18n/optional-text';

type TokenOk = Extract<FormTokenState, { kind: 'ok' }>;

/** What the page shows once the call succeeded (instead of the form). */
type Outcome =
  | { kind: 'message' }
  | { kind: 'answer'; value: unknown; continues: boolean }
  | { kind: 'countdown' }
  | { kind: 'continuing' }
  | { kind: 'failed'; message: string };

/** The path parameters of an operation, taken from the form's values. */
function pathParams(op: Operation, values: FieldValues): Record<string, string> {
  return Object.fromEntries(
    [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => [m[1], String(values[m[1] ?? ''] ?? '')]),
  );
}

export interface OperationFormProps {
  resource: string;
  kind: string;
  formRoute: FormRoute;
  op: Operation;
  token: TokenOk;
}

/** The form (or confirmation) of the operation, and what it shows once the call succeeded. */
export function OperationForm({ resource, kind, formRoute, op, token }: OperationFormProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { open } = useNotification();
  const [search] = useSearchParams();
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const isPublic = resourceOf(resource)?.meta.roles === null;
  const texts = `resources:${resource}.forms.${kind}`;
  const type = formRoute.type;
  const extension = (type && resolveFormExtension(type, formExtensions[type])) || NO_EXTENSION;
  const loadValidator = type ? formValidators[type] : undefined;
  if (type && !loadValidator) throw new Error(`${resource} has no validator for form ${kind}`);
  const validator = useQuery({
    queryKey: ['form-validator', type],
    queryFn: () =>
      loadValidator
        ? loadValidator()
        : Promise.reject(new Error(`${resource}.${kind} has no body`)),
    staleTime: Infinity,
    enabled: !!loadValidator,
  });
  const data = extension.useFormData('create', true);
  const bearer = token.bearer;
  const previewKey = formRoute.preview ? `${resource}.${formRoute.preview}` : null;
  const preview = useQuery({
    queryKey: [previewKey, 'preview', bearer],
    queryFn: () => requestOperation(previewKey ?? '', bearer ? { token: bearer } : {}),
    enabled: !!previewKey,
    staleTime: 0,
  });

  /** A failure's text: the form's own for its code, else the error catalogue's, else generic. */
  const failureText = (error: unknown): string => {
    const err = (error ?? {}) as DisplayableError;
    const code = err.description_code ?? err.error;
    const keys = code ? [`${texts}.errors.${code}`, `errors:${code}`] : [];
    return t([...keys, 'errors:generic'], { ...(err.params ?? {}) });
  };

  const doneHref = (() => {
    const target = routeTarget(resource, formRoute.then);
    return routeHref(target.resource, target.kind) ?? HOME_PATH;
  })();

  /** Where the page leads after success (the login, or the token's next step). */
  const carryOn = async (): Promise<void> => {
    const step = tokenType(token.claims);
    if (!bearer || !(continuesLogin(step) || step === 'login')) {
      setOutcome({ kind: 'countdown' });
      return;
    }
    setOutcome({ kind: 'continuing' });
    const result = await continueLogin(bearer);
    if (result.categories) await navigate(LOGIN_PATH, { replace: true });
    else if (result.success && result.redirectTo)
      await navigate(result.redirectTo, { replace: true });
    else setOutcome({ kind: 'failed', message: failureText(result.error) });
  };

  const run = async (values?: FieldValues): Promise<void> => {
    setFailure(null);
    const answer = await requestOperation(op.key, {
      params: pathParams(op, values ?? {}),
      // A call without a body still sends an empty object (the authentication calls expect one).
      ...(op.method === 'GET' ? {} : { body: values ?? {} }),
      ...(bearer ? { token: bearer } : {}),
    });
    switch (formRoute.after) {
      case 'message':
        setOutcome({ kind: 'message' });
        return;
      case 'answer':
      case 'answerContinue':
        setOutcome({ kind: 'answer', value: answer, continues: formRoute.after !== 'answer' });
        return;
      case 'loginCountdown':
        setOutcome({ kind: 'countdown' });
        return;
      case 'continueLogin':
        await carryOn();
        return;
      default: {
        const name = String(values?.name ?? '');
        open?.({ type: 'success', message: t([`${texts}.done`, 'common:form.created'], { name }) });
        await navigate(doneHref);
      }
    }
  };

  // Once shown, the form stays (a reload of its reference data would unmount it and drop input).
  const formReady = useStaysTrue(!data.loading && Boolean(validator.data));
  const title = <FormTitle resource={resource} kind={kind} />;
  const done = optionalText(t, `${texts}.done`);
  const leave = isPublic ? (
    <Button component={Link} to={LOGIN_PATH} variant="default">
      {t('common:form.toLogin')}
    </Button>
  ) : (
    <Button component={Link} to={HOME_PATH} variant="default">
      {t('common:actions.home')}
    </Button>
  );

  if (outcome)
    return (
      <Stack gap="md" maw={900} data-testid="form-outcome" data-outcome={outcome.kind}>
        {title}
        {outcome.kind === 'continuing' ? (
          <Loader aria-label={t('common:loading')} />
        ) : outcome.kind === 'failed' ? (
          <Alert color="red" role="alert">
            {outcome.message}
          </Alert>
        ) : (
          <Alert color="green" role="status" data-testid="form-done">
            {done || t('common:form.done')}
          </Alert>
        )}
        {outcome.kind === 'answer' && op.response && (
          <AnswerView resource={resource} type={op.response} value={outcome.value} />
        )}
        {outcome.kind === 'countdown' ? (
          <LoginCountdown />
        ) : outcome.kind === 'answer' && outcome.continues ? (
          <Group justify="flex-end">
            <Button onClick={() => void carryOn()} data-testid="form-continue">
              {t([`${texts}.continue`, 'common:form.continue'])}
            </Button>
          </Group>
        ) : (
          outcome.kind !== 'continuing' && leave
        )}
      </Stack>
    );

  const intro = optionalText(t, `${texts}.intro`);
  const previewView = previewKey ? (
    preview.isPending ? (
      <Loader size="sm" aria-label={t('common:loading')} />
    ) : preview.isError ? (
      <Alert color="orange" role="alert" data-testid="form-preview-error">
        {failureText(preview.error)}
      </Alert>
    ) : (
      (() => {
        const Preview = resolvePreview(formRoute.previewWidget, `${resource}.${kind}`);
        const previewType = operationOf(resource, formRoute.preview ?? '').response;
        return <Preview resource={resource} type={previewType} value={preview.data} />;
      })()
    )
  ) : null;
  const before = (
    <>
      {intro && <Text>{intro}</Text>}
      {previewView}
      {failure && (
        <Alert color="red" role="alert" data-testid="form-failure">
          {failure}
        </Alert>
      )}
    </>
  );
  const secondary: ReactNode =
    formRoute.cancel === 'logout' ? (
      <Button variant="default" onClick={() => void logout()} data-testid="form-cancel">
        {t([`${texts}.cancel`, 'common:actions.logout'])}
      </Button>
    ) : isPublic ? (
      <Anchor component={Link} to={LOGIN_PATH} size="sm">
        {t('common:form.toLogin')}
      </Anchor>
    ) : (
      <Button component={Link} to={routeHref(resource, 'list') ?? HOME_PATH} variant="default">
        {t('common:actions.cancel')}
      </Button>
    );
  const submitLabel = t([`${texts}.submit`, 'common:form.create']);

  if (type) {
    if (missingHidden(type, search).length > 0)
      return (
        <Stack gap="md" maw={900}>
          {title}
          <Alert color="orange" role="alert" data-testid="form-missing-source">
            {t('common:form.missingSource')}
          </Alert>
        </Stack>
      );
    if (!formReady || !validator.data) return <FormSkeleton />;
    return (
      <SchemaFormBody
        resource={resource}
        mode="create"
        type={type}
        record={undefined}
        data={data}
        validate={validator.data}
        extension={extension}
        title={title}
        before={before}
        onSubmit={(values) => run(values)}
        onError={(error) => setFailure(failureText(error))}
        submitLabel={submitLabel}
        secondary={secondary}
        chooseSingleOption
      />
    );
  }

  // An operation without a body: a confirmation (the preview and one button).
  const confirm = async (): Promise<void> => {
    setBusy(true);
    try {
      await run();
    } catch (error) {
      setFailure(failureText(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void confirm();
      }}
      noValidate
      aria-labelledby={`${resource}-create-title`}
    >
      <Stack gap="md" maw={900}>
        {title}
        {before}
        <Group justify="flex-end">
          {secondary}
          {!(previewKey && !preview.isSuccess) && (
            <SubmitButton loading={busy}>{submitLabel}</SubmitButton>
          )}
        </Group>
      </Stack>
    </form>
  );
}
