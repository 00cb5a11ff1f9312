/**
 * Renders the fields of a generated type (`fields.ts`) through the widget registry: x-ui order,
 * grouped by `section` under translated headings, hidden fields skipped, labels from
 * `resources:<resource>.fields.<path>`, required marks and errors (schema or server) per field.
 */
import '@mantine/core/styles/Fieldset.css';
import { Alert, Stack, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Controller, FormProvider, type FieldValues, type Path } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { fieldDomId, fieldLabelKey, groupBySection, visibleFields } from './field-meta';
import { enumOptions } from './options';
import { baseWidgets, resolveWidget } from './widget-registry';
import type { FieldOption, WidgetRegistry } from './types';
import type { SchemaFormHandle } from './use-schema-form';

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
  const sections = groupBySection(visibleFields(fields, exclude), sectionOrder);
  const rootError = (form.formState.errors as { root?: { message?: string } }).root?.message;

  return (
    <FormProvider {...form}>
      <Stack gap="lg">
        {rootError && (
          <Alert color="red" role="alert">
            {rootError}
          </Alert>
        )}
        {sections.map((section) => {
          const headingId = `${resource}-section-${section.id}`;
          return (
            <Stack
              key={section.id}
              component="section"
              gap="sm"
              aria-labelledby={headingId}
              data-section={section.id}
            >
              <Title order={headingOrder} size="h4" id={headingId}>
                {t(`common:form.sections.${section.id}`)}
              </Title>
              {section.fields.map((meta) => {
                const Widget = resolveWidget(meta, registry);
                return (
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
              })}
              {sectionExtras[section.id]}
            </Stack>
          );
        })}
      </Stack>
    </FormProvider>
  );
}

function helpText(
  t: ReturnType<typeof useTranslation>['t'],
  resource: string,
  path: string,
): string | undefined {
  const key = `resources:${resource}.help.${path}`;
  return t(key, { defaultValue: '' }) || undefined;
}
