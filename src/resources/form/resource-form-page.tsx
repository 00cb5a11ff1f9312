/**
 * The generated create and edit screens of a resource: the create body's or update body's fields
 * (x-ui order, sections in `x-ui.sections` order) through the form engine, validated by the same
 * precompiled validator the server uses. Create first asks the resource's quota check when it has
 * one; edit loads the show answer, refuses records the state rule (or the form extension) does not
 * let edit, and sends only the sections that changed. Server field errors land on their fields
 * (`x-ui.codes` names which codes belong to which field).
 */
import '@mantine/core/styles/Alert.css';
import '@mantine/core/styles/Skeleton.css';
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { Alert, Button, Group, Skeleton, Stack, Title } from '@mantine/core';
import { useCreate, useNotification, useOne, useUpdate } from '@refinedev/core';
import { useQuery } from '@tanstack/react-query';
import type { ValidateFunction } from 'ajv';
import { useWatch, type FieldValues } from 'react-hook-form';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { fields, formExtensions, formSections, type FieldMeta } from '@/generated/fields';
import { resourceOf } from '@/generated/resources';
import { formValidators } from '@/generated/form-validators';
import { machineOf, ruleAllows } from '@common/state-actions';
import { SubmitButton } from '@/components/submit-button';
import { showError, translateError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import { requestOperation } from '@/providers/http-client';
import { recordTitle } from '../actions/record-actions';
import { routeHref, routeTarget, usableOperation } from '../actions/available-actions';
import { operationOf } from '../actions/operation-inputs';
import { useOperationOptions } from './operation-options';
import { schemaDefaults } from './schema-defaults';
import { changedSections, pickFormValues } from './form-values';
import {
  resolveFormExtension,
  type FormData,
  type FormExtension,
  type FormMode,
} from './form-extension-registry';
import type { FieldsType } from './field-meta';
import { SchemaForm } from './schema-form';
import { useSchemaForm } from './use-schema-form';

const NO_EXTENSION: FormExtension = {
  useFormData: () => ({ loading: false, error: null, options: {}, overrides: {} }),
};

/** Server codes that belong to one field (`x-ui.codes`), as code -> field path. */
function codeFields(list: readonly FieldMeta[]): Record<string, string> {
  return Object.fromEntries(
    list.flatMap((meta) => (meta.codes ?? []).map((code) => [code, meta.path])),
  );
}

function FormSkeleton() {
  const { t } = useTranslation();
  return (
    <Stack gap="md" maw={900} role="status" aria-label={t('common:loading')}>
      <Skeleton height={32} width="40%" />
      {Array.from({ length: 6 }, (_, i) => (
        <Skeleton key={i} height={56} />
      ))}
    </Stack>
  );
}

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

const fieldsOfType = (type: string): readonly FieldMeta[] =>
  (fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? [];

/** The top-level keys of a form type's fields. */
const topLevelKeys = (type: string): Set<string> =>
  new Set(fieldsOfType(type).map((meta) => meta.path.split('.')[0] ?? meta.path));

/**
 * The form's starting values: the extension's (defaults, or from the show answer), else the
 * answer's fields. A new record also takes the query's values of its top-level fields
 * (`/templates/new?desktop_id=…`), which is how an action hands over the record it started from.
 */
function initialValues(
  type: string,
  mode: FormMode,
  record: Readonly<Record<string, unknown>> | undefined,
  query: URLSearchParams,
): FieldValues | null {
  const extension = resolveFormExtension(type, formExtensions[type]);
  if (mode === 'create') {
    const keys = topLevelKeys(type);
    const defaults = Object.entries(extension?.defaultValues?.() ?? {}).filter(([key]) =>
      keys.has(key),
    );
    const given = [...query.entries()].filter(([key]) => keys.has(key));
    const declared = structuredClone(schemaDefaults(type));
    return { ...declared, ...Object.fromEntries([...defaults, ...given]) };
  }
  if (!record) return null;
  return extension?.toFormValues?.(record) ?? pickFormValues(fieldsOfType(type), record);
}

/** Required fields the user cannot fill (hidden) that the query did not give: the form cannot work. */
function missingHidden(type: string, query: URLSearchParams): string[] {
  return fieldsOfType(type)
    .filter((meta) => meta.hidden && meta.required && !meta.path.includes('.'))
    .filter((meta) => !query.get(meta.path))
    .map((meta) => meta.path);
}

export interface ResourceFormPageProps {
  resource: string;
  mode: FormMode;
  /** An extra route that is the form of an operation (`x-resource.forms`): its route kind. */
  form?: string;
}

export function ResourceFormPage({ resource, mode, form }: ResourceFormPageProps) {
  const { t } = useTranslation();
  const def = resourceOf(resource);
  if (!def) throw new Error(`No resource ${resource}`);
  const formRoute = form ? def.meta.forms[form] : undefined;
  if (form && !formRoute?.type) throw new Error(`${resource} has no form ${form}`);
  const type =
    (formRoute
      ? formRoute.type
      : mode === 'create'
        ? def.meta.types.create
        : def.meta.types.update) ?? '';
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
  const blocker =
    mode === 'edit' && record
      ? (extension.editBlocker?.(record) ??
        (ruleAllows(resource, 'edit', record)
          ? null
          : `errors:${machineOf(resource)?.rules?.edit?.code ?? 'precondition_required'}`))
      : null;
  const quotaOk = useCreateQuota(
    resource,
    mode,
    !formRoute && !!usableOperation(resource, 'checkQuota', role),
  );
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
  const title = (
    <Title order={1} size="h2" id={`${resource}-${mode}-title`}>
      {t(`resources:${resource}.actions.${form ?? mode}`)}
      {record ? ` · ${recordTitle(resource, record)}` : ''}
    </Title>
  );

  if (missing.length > 0)
    return (
      <Stack gap="md">
        {title}
        <Alert color="orange" role="alert" data-testid="form-missing-source">
          {t('common:form.missingSource')}
        </Alert>
        <Group>
          <Button component={Link} to={listHref} variant="default">
            {t('common:form.back')}
          </Button>
        </Group>
      </Stack>
    );
  if (mode === 'edit' && (!id || show.query.isError || blocker))
    return (
      <Stack gap="md">
        {title}
        <Alert color="orange" role="alert" data-testid="edit-blocked">
          {!id
            ? t('common:form.missingId')
            : blocker
              ? t(blocker)
              : translateError(show.query.error as never)}
        </Alert>
        <Group>
          <Button component={Link} to={listHref} variant="default">
            {t('common:form.back')}
          </Button>
        </Group>
      </Stack>
    );
  if (!quotaOk || data.loading || !validator.data || (mode === 'edit' && !record))
    return <FormSkeleton />;
  return (
    <LoadedForm
      key={id || 'new'}
      resource={resource}
      mode={mode}
      {...(form ? { formKind: form } : {})}
      type={type}
      id={id}
      record={record}
      data={data}
      validate={validator.data}
      extension={extension}
      title={title}
    />
  );
}

interface LoadedFormProps {
  resource: string;
  mode: FormMode;
  formKind?: string;
  type: string;
  id: string;
  record: Readonly<Record<string, unknown>> | undefined;
  data: FormData;
  /** The form body's precompiled validator (the server validates with the same). */
  validate: ValidateFunction;
  extension: FormExtension;
  title: ReactNode;
}

/** The form once its starting values are known (they are taken once: live updates do not clobber edits). */
function LoadedForm({
  resource,
  mode,
  formKind,
  type,
  id,
  record,
  data,
  validate,
  extension,
  title,
}: LoadedFormProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const { open } = useNotification();
  const role = useSessionState().user?.role_id ?? null;
  const listHref = routeHref(resource, 'list') ?? '/';
  const formRoute = formKind ? resourceOf(resource)?.meta.forms[formKind] : undefined;
  const doneHref = formRoute
    ? (() => {
        const target = routeTarget(resource, formRoute.then);
        return routeHref(target.resource, target.kind) ?? listHref;
      })()
    : listHref;
  const allFields = (fields as Readonly<Record<string, readonly FieldMeta[]>>)[type];
  if (!allFields) throw new Error(`${resource} has no ${mode} form type`);
  const [search] = useSearchParams();
  const [initial] = useState(() => initialValues(type, mode, record, search) ?? {});
  // Fields the role may not set are left out of the form (the server refuses them too).
  const exclude = useMemo(
    () =>
      allFields
        .filter((meta) => meta.roles?.write && (!role || !meta.roles.write.includes(role)))
        .map((m) => m.path),
    [allFields, role],
  );
  const handle = useSchemaForm<FieldValues>({
    type: type as FieldsType,
    validate,
    resource,
    overrides: data.overrides,
    defaultValues: initial,
  });
  const { form } = handle;
  const current = useWatch({ control: form.control });
  const loaded = useOperationOptions(allFields, role);
  const options = useMemo(
    () => ({
      ...loaded,
      ...(typeof data.options === 'function' ? data.options(current) : data.options),
    }),
    [data, current, loaded],
  );
  (extension.useFormEffects ?? (() => undefined))(handle, mode);

  const { mutateAsync: create } = useCreate();
  const { mutateAsync: update } = useUpdate();
  const codes = useMemo(() => codeFields(allFields), [allFields]);
  const submit = form.handleSubmit(async (values) => {
    const name = String(values.name ?? (record ? recordTitle(resource, record) : ''));
    try {
      if (formRoute) {
        const op = operationOf(resource, formRoute.operation);
        const params = Object.fromEntries(
          [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => [m[1], String(values[m[1] ?? ''])]),
        );
        await requestOperation(op.key, { params, body: values });
        open?.({ type: 'success', message: t('common:form.created', { name }) });
      } else if (mode === 'create') {
        await create({ resource, values, successNotification: false, errorNotification: false });
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
      await navigate(doneHref);
    } catch (error) {
      if (!handle.applyServerErrors(error, codes)) showError(error);
    }
  }, handle.focusFirstError);

  return (
    <form
      onSubmit={(event) => void submit(event)}
      noValidate
      aria-labelledby={`${resource}-${mode}-title`}
    >
      <Stack gap="md" maw={900}>
        {title}
        {Boolean(data.error) && (
          <Alert color="red" role="alert">
            {translateError(data.error as never)}
          </Alert>
        )}
        <SchemaForm
          handle={handle}
          {...(extension.widgets ? { widgets: extension.widgets } : {})}
          options={options}
          exclude={exclude}
          sectionOrder={formSections[type] ?? []}
        />
        <Group justify="flex-end">
          <Button component={Link} to={listHref} variant="default">
            {t('common:actions.cancel')}
          </Button>
          <SubmitButton
            loading={form.formState.isSubmitting}
            disabled={mode === 'edit' && !form.formState.isDirty}
          >
            {t(mode === 'create' ? 'common:form.create' : 'common:form.save')}
          </SubmitButton>
        </Group>
      </Stack>
    </form>
  );
}
