/**
 * The generated create and edit screens of a resource: the create body's or update body's fields
 * (x-ui order, sections in `x-ui.sections` order) through the form engine, validated by the same
 * precompiled validator the server uses. Create first asks the resource's quota check when it has
 * one; edit loads the show answer, refuses records the state rule (or the form extension) does not
 * let edit, and sends only the sections that changed. Server field errors land on their fields
 * (`x-ui.codes` names which codes belong to which field). The extra routes that are an operation's
 * form are ./operation-form-page.tsx.
 */
import '@mantine/core/styles/Alert.css';
import { useEffect, useState } from 'react';
import { Alert, Button, Group, Stack, Title } from '@mantine/core';
import { useCreate, useNotification, useOne, useUpdate } from '@refinedev/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { FieldValues } from 'react-hook-form';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { formExtensions } from '@/generated/fields';
import { resourceOf } from '@/generated/resources';
import { formValidators } from '@/generated/form-validators';
import { machineOf, ruleAllows } from '@common/state-actions';
import { showError, translateError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import { requestOperation } from '@/providers/http-client';
import { recordName, recordTitle } from '../actions/record-actions';
import { routeHref, usableOperation } from '../actions/available-actions';
import { answeredId, listedIds, rememberCreated } from '../actions/created-record';
import { changedSections } from './form-values';
import { resolveFormExtension, type FormMode } from './form-extension-registry';
import { FormSkeleton, missingHidden, NO_EXTENSION, SchemaFormBody } from './form-body';
import { useStaysTrue } from './use-stays-true';

/** Asks `<resource>.checkQuota` before a create form opens; goes back to the list when refused. */
function useCreateQuota(resource: string, mode: FormMode, enabled: boolean): boolean {
  const navigate = useNavigate();
  const [ok, setOk] = useState(!enabled || mode !== 'create');
  useEffect(() => {
    if (!enabled || mode !== 'create') return;
    let active = true;
    requestOperation(`${resource}.checkQuota`).then(
      () => active && setOk(true),
      (error: unknown) => {
        if (!active) return;
        showError(error);
        void navigate(routeHref(resource, 'list') ?? '/');
      },
    );
    return () => {
      active = false;
    };
  }, [resource, mode, enabled, navigate]);
  return ok;
}

export interface ResourceFormPageProps {
  resource: string;
  mode: FormMode;
}

export function ResourceFormPage({ resource, mode }: ResourceFormPageProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { open } = useNotification();
  const queryClient = useQueryClient();
  const def = resourceOf(resource);
  if (!def) throw new Error(`No resource ${resource}`);
  const type = (mode === 'create' ? def.meta.types.create : def.meta.types.update) ?? '';
  const extension = resolveFormExtension(type, formExtensions[type]) ?? NO_EXTENSION;
  const role = useSessionState().user?.role_id ?? null;
  const listHref = routeHref(resource, 'list') ?? '/';

  const params = useParams();
  const [search] = useSearchParams();
  const id = mode === 'edit' ? (params.id ?? search.get('id') ?? '') : '';
  const show = useOne<Readonly<Record<string, unknown>> & { id: string }>({
    resource,
    id,
    queryOptions: { enabled: mode === 'edit' && !!id, staleTime: 0 },
    errorNotification: false,
  });
  const record = show.result;
  // The fields the show answer lacks come from the resource's `editPrefill` read (a deployment's info).
  const prefillOperation = mode === 'edit' && id ? def.meta.editPrefill : null;
  const prefill = useQuery({
    queryKey: [`${resource}.${prefillOperation ?? ''}`, id],
    queryFn: async () =>
      (await requestOperation(`${resource}.${prefillOperation ?? ''}`, {
        params: { id },
      })) as Readonly<Record<string, unknown>>,
    enabled: !!prefillOperation,
    staleTime: 0,
  });
  const blocker =
    mode === 'edit' && record
      ? (extension.editBlocker?.(record) ??
        (ruleAllows(resource, 'edit', record)
          ? null
          : `errors:${machineOf(resource)?.rules?.edit?.code ?? 'precondition_required'}`))
      : null;
  const quotaOk = useCreateQuota(resource, mode, !!usableOperation(resource, 'checkQuota', role));
  const missing = mode === 'create' ? missingHidden(type, search) : [];
  const loadValidator = formValidators[type];
  if (!loadValidator) throw new Error(`${resource} has no ${mode} form type`);
  const validator = useQuery({
    queryKey: ['form-validator', type],
    queryFn: loadValidator,
    staleTime: Infinity,
  });
  const data = extension.useFormData(
    mode,
    quotaOk && (mode === 'create' || (!!record && !blocker)),
  );
  const { mutateAsync: create } = useCreate();
  const { mutateAsync: update } = useUpdate();
  // Once shown, the form stays (a reload of its reference data would unmount it and drop input).
  const formReady = useStaysTrue(
    quotaOk &&
      !data.loading &&
      Boolean(validator.data) &&
      !(mode === 'edit' && !record) &&
      !(prefillOperation && !prefill.data),
  );
  const title = (
    <Title order={1} size="h2" id={`${resource}-${mode}-title`}>
      {t(`resources:${resource}.actions.${mode}`)}
      {record && recordName(resource, record) ? ` · ${recordName(resource, record)}` : ''}
    </Title>
  );
  const back = (
    <Group>
      <Button component={Link} to={listHref} variant="default">
        {t('common:form.back')}
      </Button>
    </Group>
  );

  if (missing.length > 0)
    return (
      <Stack gap="md">
        {title}
        <Alert color="orange" role="alert" data-testid="form-missing-source">
          {t('common:form.missingSource')}
        </Alert>
        {back}
      </Stack>
    );
  const loadError = show.query.error ?? prefill.error;
  if (mode === 'edit' && (!id || loadError || blocker))
    return (
      <Stack gap="md">
        {title}
        <Alert color="orange" role="alert" data-testid="edit-blocked">
          {!id
            ? t('common:form.missingId')
            : blocker
              ? t(blocker)
              : translateError(loadError as never)}
        </Alert>
        {back}
      </Stack>
    );
  if (!formReady || !validator.data) return <FormSkeleton />;

  const submit = async (values: FieldValues, initial: FieldValues): Promise<void> => {
    const name = String(values.name ?? (record ? recordTitle(resource, record) : ''));
    if (mode === 'create') {
      const before = listedIds(queryClient, resource);
      const answer = await create({
        resource,
        values,
        successNotification: false,
        errorNotification: false,
      });
      // The list it returns to focuses the new record.
      rememberCreated({
        resource,
        id: answeredId(answer.data),
        title: recordName(resource, values),
        before,
      });
      open?.({ type: 'success', message: t('common:form.created', { name }) });
    } else {
      const changed = changedSections(initial, values);
      if (Object.keys(changed).length)
        await update({
          resource,
          id,
          values: changed,
          successNotification: false,
          errorNotification: false,
        });
      open?.({ type: 'success', message: t('common:form.saved', { name }) });
    }
    await navigate(listHref);
  };

  return (
    <SchemaFormBody
      key={id || 'new'}
      resource={resource}
      mode={mode}
      type={type}
      record={record}
      {...(prefill.data ? { prefill: prefill.data } : {})}
      data={data}
      validate={validator.data}
      extension={extension}
      title={title}
      onSubmit={submit}
      submitLabel={t(mode === 'create' ? 'common:form.create' : 'common:form.save')}
      requireChange={mode === 'edit'}
      secondary={
        <Button component={Link} to={listHref} variant="default">
          {t('common:actions.cancel')}
        </Button>
      }
    />
  );
}
