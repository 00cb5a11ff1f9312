/**
 * The one form validation: a react-hook-form resolver around a PRECOMPILED generated validator
 * (src/generated/validators.js). Empty values ('' / undefined) are pruned first; every ajv error becomes
 * `{ type: keyword, message }` on the nearest form field, with the message from
 * `errors:validation.<code>` where the code is `errorCodeOf(error)` (x-error code or ajv keyword).
 * The cross-field rules of the form's type the form can check alone (`x-constraints` of kind
 * `sameAs`: a confirmation equals its field) land on their first field the same way, before any call.
 * Server field errors (HttpError.errors, JSON pointers -> codes) go through the same translation.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FieldError, FieldErrors, FieldValues, Resolver } from 'react-hook-form';
import type { TFunction } from 'i18next';
import { constraints } from '@/generated/constants';
import { errorCodeOf } from '@/generated/error-codes';
import type { FieldMeta } from '@/generated/fields';
import { fieldLabelKey, getIn, nearestField, pointerToPath, setIn } from './field-meta';

/** A cross-field rule of the generated `constraints` table (`x-constraints`). */
export interface CrossFieldRule {
  kind: string;
  /** The fields it relates; the first is where a failure shows. */
  fields: readonly string[];
  code: string;
  /** The generated type of the body it applies to. */
  schemaType?: string;
}

const RULES: Readonly<Record<string, Readonly<Record<string, CrossFieldRule>>>> = constraints;
/** Rule kinds a form checks by itself (the others need the server's data). */
const FORM_RULE_KINDS: ReadonlySet<string> = new Set(['sameAs']);

/** The cross-field rules of a form type the form checks before sending (sameAs). */
export function formRules(type: string): CrossFieldRule[] {
  return Object.values(RULES)
    .flatMap((group) => Object.values(group))
    .filter((rule) => rule.schemaType === type && FORM_RULE_KINDS.has(rule.kind));
}

export interface SchemaResolverOptions {
  /** Precompiled validator, imported by name from `@/generated/validators` (e.g. `DesktopCreate`). */
  validate: ValidateFunction;
  /** Cross-field rules of the type (`formRules`); none when absent. */
  rules?: readonly CrossFieldRule[];
  /** Field metadata of the same type (after overrides): error paths snap to these fields. */
  fields: readonly FieldMeta[];
  /** Resource whose field labels name the property in messages. */
  resource: string;
  t: TFunction;
}

export type FlatErrors = Record<string, FieldError>;

/**
 * Removes '', undefined and NaN values (recursively); keeps null (a wire value: `options: null`,
 * `vgpus: null`) and empty objects and arrays (an empty viewers map is an error to report).
 */
export function pruneEmpty<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => pruneEmpty(item) as unknown) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (item === undefined || item === '' || (typeof item === 'number' && Number.isNaN(item)))
        continue;
      out[key] = pruneEmpty(item);
    }
    return out as T;
  }
  return value;
}

/** Translated validation message for a code (validation key, then the error catalogue). */
export function validationMessage(
  t: TFunction,
  code: string,
  params: Record<string, unknown>,
): string {
  return t([`errors:validation.${code}`, `errors:${code}`, 'errors:validation.invalid'], params);
}

function messageParams(
  meta: FieldMeta | undefined,
  value: unknown,
  extra: Record<string, unknown>,
  t: TFunction,
  resource: string,
  path: string,
) {
  const length = typeof value === 'string' || Array.isArray(value) ? value.length : undefined;
  const bounds = {
    minLength: meta?.minLength,
    maxLength: meta?.maxLength,
    minimum: meta?.minimum,
    maximum: meta?.maximum,
  };
  return { property: t(fieldLabelKey(resource, meta?.path ?? path)), length, ...bounds, ...extra };
}

/** Maps ajv errors to flat `{ dottedPath: FieldError }` (first error per field wins). */
export function ajvFieldErrors(
  errors: readonly ErrorObject[],
  values: unknown,
  options: Omit<SchemaResolverOptions, 'validate'>,
): FlatErrors {
  const known = options.fields.map((meta) => meta.path);
  const out: FlatErrors = {};
  for (const error of errors) {
    const params = error.params as Record<string, unknown>;
    const extra = (params.missingProperty ?? params.additionalProperty) as string | undefined;
    const raw = pointerToPath(error.instancePath + (extra ? `/${extra}` : ''));
    const path = nearestField(raw, known) || 'root';
    if (out[path]) continue;
    const meta = options.fields.find((field) => field.path === path);
    const code = errorCodeOf(error);
    out[path] = {
      type: error.keyword,
      message: validationMessage(
        options.t,
        code,
        messageParams(meta, getIn(values, path), params, options.t, options.resource, path),
      ),
    };
  }
  return out;
}

/** Numeric bounds a page tightened beyond the schema (e.g. quota maxima), checked like the schema's. */
export function boundErrors(
  values: unknown,
  options: Omit<SchemaResolverOptions, 'validate'>,
): FlatErrors {
  const out: FlatErrors = {};
  for (const meta of options.fields) {
    const value = getIn(values, meta.path);
    if (typeof value !== 'number') continue;
    const keyword =
      meta.maximum !== undefined && value > meta.maximum
        ? 'maximum'
        : meta.minimum !== undefined && value < meta.minimum
          ? 'minimum'
          : null;
    if (!keyword) continue;
    const limit = keyword === 'maximum' ? meta.maximum : meta.minimum;
    out[meta.path] = {
      type: keyword,
      message: validationMessage(
        options.t,
        keyword,
        messageParams(meta, value, { limit }, options.t, options.resource, meta.path),
      ),
    };
  }
  return out;
}

/**
 * Failures of the cross-field rules: a `sameAs` pair that differs puts the rule's code on its first
 * field (the confirmation). A pair left empty is the schema's business (required fields).
 */
export function ruleErrors(
  values: unknown,
  options: Omit<SchemaResolverOptions, 'validate'>,
): FlatErrors {
  const out: FlatErrors = {};
  for (const rule of options.rules ?? []) {
    const [field, other] = rule.fields;
    if (rule.kind !== 'sameAs' || !field || !other || out[field]) continue;
    const value = getIn(values, field);
    const expected = getIn(values, other);
    if ((value === undefined && expected === undefined) || value === expected) continue;
    const meta = options.fields.find((candidate) => candidate.path === field);
    out[field] = {
      type: rule.kind,
      message: validationMessage(
        options.t,
        rule.code,
        messageParams(
          meta,
          value,
          { other: options.t(fieldLabelKey(options.resource, other)) },
          options.t,
          options.resource,
          field,
        ),
      ),
    };
  }
  return out;
}

/** Flat errors -> the nested shape react-hook-form expects. */
export function nestErrors<T extends FieldValues>(flat: FlatErrors): FieldErrors<T> {
  const nested: Record<string, unknown> = {};
  for (const [path, error] of Object.entries(flat)) setIn(nested, path, error);
  return nested as FieldErrors<T>;
}

/**
 * The fields of an optional object (`anyOf: [object, null]`) that were never set: the form
 * registers them as null when the object started as null, and a field that cannot be null and is
 * null is simply not given (a quota's blank limit is no limit).
 */
export function dropUnsetMembers<T>(values: T, fields: readonly FieldMeta[]): T {
  const parents = fields.filter((meta) => meta.type === 'object' && meta.nullable);
  for (const parent of parents) {
    const object = getIn(values, parent.path);
    if (!object || typeof object !== 'object') continue;
    for (const meta of fields) {
      if (!meta.path.startsWith(`${parent.path}.`) || meta.nullable) continue;
      if (getIn(values, meta.path) !== null) continue;
      const cut = meta.path.lastIndexOf('.');
      const holder = getIn(values, meta.path.slice(0, cut));
      if (holder && typeof holder === 'object')
        Reflect.deleteProperty(holder, meta.path.slice(cut + 1));
    }
  }
  return values;
}

/** Validates pruned values; returns flat field errors (empty when valid). */
export function validateValues(
  values: unknown,
  options: SchemaResolverOptions,
): { values: unknown; errors: FlatErrors } {
  const pruned = dropUnsetMembers(pruneEmpty(values), options.fields);
  const ok = options.validate(pruned);
  // The schema's own message wins on a field that fails both.
  const errors = {
    ...boundErrors(pruned, options),
    ...ruleErrors(pruned, options),
    ...(ok ? {} : ajvFieldErrors(options.validate.errors ?? [], pruned, options)),
  };
  return { values: pruned, errors };
}

/** The react-hook-form resolver. `getOptions` is read on every run (fields may change with limits). */
export function schemaResolver<T extends FieldValues>(
  getOptions: () => SchemaResolverOptions,
): Resolver<T> {
  return (values) => {
    const result = validateValues(values, getOptions());
    if (Object.keys(result.errors).length)
      return { values: {}, errors: nestErrors<T>(result.errors) };
    return { values: result.values as T, errors: {} };
  };
}

/**
 * Field errors of a failed request: the `errors` map (JSON pointer -> code), plus `codeFields`
 * for codes that belong to one field (e.g. `new_desktop_name_exists` -> `name`).
 */
export function serverFieldErrors(
  error:
    | {
        errors?: Record<string, string>;
        description_code?: string;
        params?: Record<string, unknown> | null;
      }
    | null
    | undefined,
  options: Omit<SchemaResolverOptions, 'validate'>,
  codeFields: Readonly<Record<string, string>> = {},
): FlatErrors {
  const out: FlatErrors = {};
  const known = options.fields.map((meta) => meta.path);
  const params = error?.params ?? {};
  for (const [pointer, code] of Object.entries(error?.errors ?? {})) {
    const path = nearestField(pointerToPath(pointer), known) || 'root';
    const meta = options.fields.find((field) => field.path === path);
    const bound =
      meta &&
      (['minimum', 'maximum', 'minLength', 'maxLength'] as const).find((name) => name === code);
    const limit = (params as { max?: unknown }).max ?? (bound ? meta[bound] : undefined);
    out[path] ??= {
      type: code,
      message: validationMessage(
        options.t,
        code,
        messageParams(meta, undefined, { ...params, limit }, options.t, options.resource, path),
      ),
    };
  }
  const code = error?.description_code;
  const field = code ? codeFields[code] : undefined;
  if (code && field && !out[field])
    out[field] = { type: code, message: validationMessage(options.t, code, { ...params }) };
  return out;
}
