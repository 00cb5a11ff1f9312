/**
 * react-hook-form wired to a generated type: the schema resolver (precompiled validator, the type's
 * cross-field rules, field metadata with the page's overrides) and the placement of server field
 * errors.
 */
import { useCallback, useLayoutEffect, useMemo, useRef } from 'react';
import {
  useForm,
  type DefaultValues,
  type FieldValues,
  type Path,
  type Resolver,
  type UseFormReturn,
} from 'react-hook-form';
import type { ValidateFunction } from 'ajv';
import { useTranslation } from 'react-i18next';
import type { FieldMeta } from '@/generated/fields';
import { errorPaths, fieldDomId, fieldsOf, type FieldsType } from './field-meta';
import {
  formRules,
  schemaResolver,
  serverFieldErrors,
  type SchemaResolverOptions,
} from './resolver';
import type { FieldOverrides } from './types';

export interface UseSchemaFormOptions<T extends FieldValues> {
  /** Generated type whose fields are rendered (`DesktopCreate`). */
  type: FieldsType;
  /** The precompiled validator of the same name. */
  validate: ValidateFunction;
  resource: string;
  defaultValues?: DefaultValues<T>;
  /** Page overrides of the metadata (quota maxima, section placement). */
  overrides?: FieldOverrides;
}

export interface SchemaFormHandle<T extends FieldValues> {
  form: UseFormReturn<T>;
  fields: FieldMeta[];
  resource: string;
  /** Puts a failed request's field errors on the fields; true when at least one landed. */
  applyServerErrors: (error: unknown, codeFields?: Readonly<Record<string, string>>) => boolean;
  /** Moves keyboard focus to the first field with an error (pass as handleSubmit's onInvalid). */
  focusFirstError: (errors: unknown) => void;
}

export function useSchemaForm<T extends FieldValues>({
  type,
  validate,
  resource,
  defaultValues,
  overrides,
}: UseSchemaFormOptions<T>): SchemaFormHandle<T> {
  const { t } = useTranslation();
  const fields = useMemo(() => fieldsOf(type, overrides), [type, overrides]);
  const rules = useMemo(() => formRules(type), [type]);
  // The resolver reads the latest options (fields change when the quota limits arrive).
  const optionsRef = useRef<SchemaResolverOptions>({ validate, rules, fields, resource, t });
  useLayoutEffect(() => {
    optionsRef.current = { validate, rules, fields, resource, t };
  }, [validate, rules, fields, resource, t]);
  const resolver = useCallback<Resolver<T>>(
    (values, context, opts) => schemaResolver<T>(() => optionsRef.current)(values, context, opts),
    [],
  );
  const form = useForm<T>({
    resolver,
    mode: 'onTouched',
    ...(defaultValues ? { defaultValues } : {}),
  });
  const { setError } = form;

  const focusFirstError = useCallback(
    (errors: unknown) => {
      const order = fields.map((meta) => meta.path);
      const paths = errorPaths(errors).filter((path) => path !== 'root');
      paths.sort((a, b) => order.indexOf(a) - order.indexOf(b));
      const first = paths[0];
      if (first) document.getElementById(fieldDomId(resource, first))?.focus();
    },
    [fields, resource],
  );

  const applyServerErrors = useCallback(
    (error: unknown, codeFields: Readonly<Record<string, string>> = {}) => {
      const flat = serverFieldErrors(
        error as Parameters<typeof serverFieldErrors>[0],
        optionsRef.current,
        codeFields,
      );
      const paths = Object.keys(flat);
      for (const path of paths) setError(path as Path<T>, flat[path] as never);
      focusFirstError(Object.fromEntries(paths.map((path) => [path, flat[path]])));
      return paths.length > 0;
    },
    [setError, focusFirstError],
  );

  return { form, fields, resource, applyServerErrors, focusFirstError };
}
