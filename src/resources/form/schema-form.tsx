/**
 * Renders the fields of a generated type (`fields.ts`) through the widget registry: x-ui order,
 * grouped by `section` under translated headings, hidden fields skipped, labels from
 * `resources:<resource>.fields.<path>`, required marks and errors (schema or server) per field.
 * An optional object (`anyOf: [object, null]`) is its switch, with its own fields indented under
 * it while it is on (they are not registered while it is null, so null stays null).
 */
import '@mantine/core/styles/Fieldset.css';
import { Alert, Box, Stack, Title } from '@mantine/core';
import { useId, type ReactNode } from 'react';
import {
  Controller,
  FormProvider,
  useWatch,
  type Control,
  type FieldValues,
  type Path,
} from 'react-hook-form';
import type { FieldMeta } from '@/generated/fields';
import { useTranslation } from 'react-i18next';
import { fieldDomId, fieldLabelKey, groupBySection, visibleFields } from './field-meta';
import { enumOptions } from './options';
import { isSetObject } from './nullable-object-widget';
import { baseWidgets, resolveWidget } from './widget-registry';
import type { FieldOption, WidgetRegistry } from './types';
import type { SchemaFormHandle } from './use-schema-form';
import { optionalText } from '@/i18n/optional-text';

export interface SchemaFormProps<T extends FieldValues> {
  /** The handle from `useSchemaForm`. */
  handle: SchemaFormHandle<T>;
  /** Feature widgets added to the base registry. */
  widgets?: WidgetRegistry;
  /** Choices per field path (select-like widgets); enum fields default to their translated enum. */
  options?: Readonly<Record<string, readonly FieldOption[]>>;
  /** Field paths not rendered here. */
  exclude?: readonly string[];
  /** Section order (others follow in field order). */
  sectionOrder?: readonly string[];
  /** Extra content rendered at the end of a section (by section id). */
  sectionExtras?: Readonly<Record<string, ReactNode>>;
  /** Paths shown disabled. */
  disabledPaths?: readonly string[];
  /** Heading level of the section titles (default 2). */
  headingOrder?: 2 | 3 | 4;
}

export function SchemaForm<T extends FieldValues>({
  handle,
  widgets,
  options = {},
  exclude = [],
  sectionOrder = [],
  sectionExtras = {},
  disabledPaths = [],
  headingOrder = 2,
}: SchemaFormProps<T>) {
  const { t } = useTranslation();
  const { form, fields, resource } = handle;
  const registry = { ...baseWidgets, ...widgets };
  const visible = visibleFields(fields, exclude);
  const optional = visible.filter(isOptionalObject).map((meta) => meta.path);
  const parentOf = (meta: FieldMeta): string | undefined =>
    optional.find((path) => meta.path.startsWith(`${path}.`));
  // Unique per form: a details page shows the same sections with ids of its own.
  const formId = useId();
  const sections = groupBySection(
    visible.filter((meta) => parentOf(meta) === undefined),
    sectionOrder,
  );
  const rootError = (form.formState.errors as { root?: { message?: string } }).root?.message;

  const renderField = (meta: FieldMeta): ReactNode => {
    const Widget = resolveWidget(meta, registry);
    const field = (
      <Controller
        key={meta.path}
        control={form.control}
        name={meta.path as Path<T>}
        render={({ field, fieldState }) => (
          <Widget
            id={fieldDomId(resource, meta.path)}
            path={meta.path}
            label={t(fieldLabelKey(resource, meta.path))}
            description={helpText(t, resource, meta.path)}
            value={field.value}
            onChange={field.onChange}
            onBlur={field.onBlur}
            error={fieldState.error?.message}
            required={meta.required}
            disabled={disabledPaths.includes(meta.path) || form.formState.isSubmitting}
            meta={meta}
            options={options[meta.path] ?? enumOptions(t, resource, meta)}
          />
        )}
      />
    );
    if (!optional.includes(meta.path)) return field;
    return (
      <Stack key={meta.path} gap="sm" data-optional-object={meta.path}>
        {field}
        <OptionalObjectFields control={form.control} path={meta.path}>
          {visible.filter((child) => parentOf(child) === meta.path).map(renderField)}
        </OptionalObjectFields>
      </Stack>
    );
  };

  return (
    <FormProvider {...form}>
      <Stack gap="lg">
        {rootError && (
          <Alert color="red" role="alert">
            {rootError}
          </Alert>
        )}
        {sections.map((section) => {
          const headingId = `${formId}-${resource}-section-${section.id}`;
          return (
            // A group, not a region landmark: a form in a dialog over a details page would
            // repeat the page's own section landmarks.
            <Stack
              key={section.id}
              role="group"
              gap="sm"
              aria-labelledby={headingId}
              data-section={section.id}
            >
              <Title order={headingOrder} size="h4" id={headingId}>
                {t(`common:form.sections.${section.id}`)}
              </Title>
              {section.fields.map(renderField)}
              {sectionExtras[section.id]}
            </Stack>
          );
        })}
      </Stack>
    </FormProvider>
  );
}

/** An optional object (`anyOf: [object, null]`): a row drawn as a switch over its own fields. */
export function isOptionalObject(meta: FieldMeta): boolean {
  return meta.type === 'object' && meta.nullable && meta.widget === 'nullableObject';
}

/** The fields of an optional object, shown (and registered) only while it is an object. */
function OptionalObjectFields<T extends FieldValues>({
  control,
  path,
  children,
}: {
  control: Control<T>;
  path: string;
  children: ReactNode;
}) {
  const value: unknown = useWatch({ control, name: path as Path<T> });
  if (!isSetObject(value)) return null;
  return (
    <Box
      pl="md"
      style={{ borderInlineStart: '2px solid var(--mantine-color-default-border)' }}
      data-testid="optional-object-fields"
    >
      <Stack gap="sm">{children}</Stack>
    </Box>
  );
}

function helpText(
  t: ReturnType<typeof useTranslation>['t'],
  resource: string,
  path: string,
): string | undefined {
  const key = `resources:${resource}.help.${path}`;
  return optionalText(t, key) || undefined;
}
