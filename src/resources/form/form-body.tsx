/**
 * The generated form of one body type, shared by the create and edit pages and the form routes:
 * the type's fields through the form engine (x-ui order, sections), its choices (operation options
 * and the form extension's), the fields the role may not write left out, and a submit that puts the
 * server's field errors on their fields (`x-ui.codes` names which codes belong to which field).
 * What the submit does, and what the page offers besides it, is the page's.
 */
import '@mantine/core/styles/Alert.css';
import '@mantine/core/styles/Skeleton.css';
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { Alert, Group, Skeleton, Stack } from '@mantine/core';
import type { ValidateFunction } from 'ajv';
import { useWatch, type FieldValues, type Path, type UseFormReturn } from 'react-hook-form';
import { useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { fields, formExtensions, formSections, type FieldMeta } from '@/generated/fields';
import { SubmitButton } from '@/components/submit-button';
import { showError, translateError } from '@/lib/error-display';
import { hiddenFields, pathHidden, useRoleVisibilityRevision } from '@/lib/role-visibility';
import { useSessionState } from '@/lib/session-state';
import { useOperationOptions } from './operation-options';
import { schemaDefaults } from './schema-defaults';
import { pickFormValues } from './form-values';
import {
  resolveFormExtension,
  type FormData,
  type FormExtension,
  type FormMode,
} from './form-extension-registry';
import type { FieldsType } from './field-meta';
import { SchemaForm } from './schema-form';
import { useSchemaForm } from './use-schema-form';

export const NO_EXTENSION: FormExtension = {
  useFormData: () => ({ loading: false, error: null, options: {}, overrides: {} }),
};

/** Server codes that belong to one field (`x-ui.codes`), as code -> field path. */
function codeFields(list: readonly FieldMeta[]): Record<string, string> {
  return Object.fromEntries(
    list.flatMap((meta) => (meta.codes ?? []).map((code) => [code, meta.path])),
  );
}

export function FormSkeleton() {
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

export const fieldsOfType = (type: string): readonly FieldMeta[] =>
  (fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? [];

/** The top-level keys of a form type's fields. */
const topLevelKeys = (type: string): Set<string> =>
  new Set(fieldsOfType(type).map((meta) => meta.path.split('.')[0] ?? meta.path));

/**
 * The form's starting values: the extension's (defaults, or from the show answer), else the
 * answer's fields. A new record also takes the query's values of its top-level fields
 * (`/templates/new?desktop_id=…`), which is how an action hands over the record it started from.
 * An edit whose resource names an `editPrefill` operation takes the fields the show answer lacks
 * from that answer (`prefill`); the show answer's own fields win.
 */
export function initialValues(
  type: string,
  mode: FormMode,
  record: Readonly<Record<string, unknown>> | undefined,
  query: URLSearchParams,
  prefill?: Readonly<Record<string, unknown>>,
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
  const valuesOf = (answer: Readonly<Record<string, unknown>>): FieldValues =>
    extension?.toFormValues?.(answer) ?? pickFormValues(fieldsOfType(type), answer);
  return prefill ? { ...valuesOf(prefill), ...valuesOf(record) } : valuesOf(record);
}

/** Required fields the user cannot fill (hidden) that the query did not give: the form cannot work. */
export function missingHidden(type: string, query: URLSearchParams): string[] {
  return fieldsOfType(type)
    .filter((meta) => meta.hidden && meta.required && !meta.path.includes('.'))
    .filter((meta) => !query.get(meta.path))
    .map((meta) => meta.path);
}

export interface SchemaFormBodyProps {
  resource: string;
  mode: FormMode;
  type: string;
  record: Readonly<Record<string, unknown>> | undefined;
  /** The answer of the resource's `editPrefill` operation (the fields the show answer lacks). */
  prefill?: Readonly<Record<string, unknown>>;
  data: FormData;
  /** The form body's precompiled validator (the server validates with the same). */
  validate: ValidateFunction;
  extension: FormExtension;
  /** The heading (its id labels the form: `<resource>-<mode>-title`). */
  title: ReactNode;
  /** Shown between the heading and the fields (an introduction, a preview). */
  before?: ReactNode;
  /** Sends the values; a rejection's field errors land on the fields, the rest go to `onError`. */
  onSubmit: (values: FieldValues, initial: FieldValues) => Promise<void>;
  /** A failure no field took (default: the error toast). */
  onError?: (error: unknown) => void;
  submitLabel: string;
  /** The submit stays disabled until something changed (edit). */
  requireChange?: boolean;
  /** What the page offers beside the submit (cancel, reject...). */
  secondary?: ReactNode;
  /** A required choice with exactly one option starts chosen (the one category of a sign-up). */
  chooseSingleOption?: boolean;
}

/** The form once its starting values are known (they are taken once: live updates do not clobber edits). */
export function SchemaFormBody({
  resource,
  mode,
  type,
  record,
  prefill,
  data,
  validate,
  extension,
  title,
  before,
  onSubmit,
  onError = (error) => void showError(error),
  submitLabel,
  requireChange = false,
  secondary,
  chooseSingleOption = false,
}: SchemaFormBodyProps) {
  const role = useSessionState().user?.role_id ?? null;
  const allFields = fieldsOfType(type);
  if (allFields.length === 0) throw new Error(`${resource} has no ${mode} form type`);
  const [search] = useSearchParams();
  const [initial] = useState(() => initialValues(type, mode, record, search, prefill) ?? {});
  // Fields the role may not set are left out of the form (the server refuses them too), and so
  // are the optional fields the admin's role visibility hides from it.
  useRoleVisibilityRevision();
  const hidden = hiddenFields(resource, role);
  const exclude = useMemo(
    () =>
      allFields
        .filter(
          (meta) =>
            (meta.roles?.write && (!role || !meta.roles.write.includes(role))) ||
            (!meta.required && pathHidden(hidden, meta.path)),
        )
        .map((m) => m.path),
    [allFields, role, hidden],
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
  useSingleOption(chooseSingleOption, allFields, options, handle.form);

  const codes = useMemo(() => codeFields(allFields), [allFields]);
  const submit = form.handleSubmit(async (values) => {
    try {
      await onSubmit(values, initial);
    } catch (error) {
      if (!handle.applyServerErrors(error, codes)) onError(error);
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
        {before}
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
          {secondary}
          <SubmitButton
            loading={form.formState.isSubmitting}
            disabled={requireChange && !form.formState.isDirty}
          >
            {submitLabel}
          </SubmitButton>
        </Group>
      </Stack>
    </form>
  );
}

/** Chooses the only option of each empty required select (when asked to). */
function useSingleOption(
  enabled: boolean,
  list: readonly FieldMeta[],
  options: Readonly<Record<string, readonly { value: string }[]>>,
  form: UseFormReturn<FieldValues>,
): void {
  const { getValues, setValue } = form;
  useEffect(() => {
    if (!enabled) return;
    for (const meta of list) {
      const only = options[meta.path];
      if (!meta.required || meta.hidden || only?.length !== 1 || !only[0]) continue;
      if (getValues(meta.path) === undefined || getValues(meta.path) === '')
        setValue(meta.path as Path<FieldValues>, only[0].value, { shouldDirty: true });
    }
  }, [enabled, list, options, getValues, setValue]);
}
