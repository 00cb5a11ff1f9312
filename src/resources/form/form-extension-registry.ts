/**
 * Form extensions: what a generated form of one type needs beyond its schema, registered by
 * features under the name `x-ui.form` gives (the desktop form: allowed hardware and its limits,
 * the choices of templates, media and cards, the template prefill). The page stays generic; an
 * unknown name throws, naming the type.
 */
import type { FieldValues } from 'react-hook-form';
import type { FieldOption, FieldOverrides, WidgetRegistry } from './types';
import type { SchemaFormHandle } from './use-schema-form';

export type FormMode = 'create' | 'edit';

export interface FormData {
  /** Reference data still loading: the form waits. */
  loading: boolean;
  error: unknown;
  /** Choices per field path, or a function of the form's current values giving them. */
  options:
    | Readonly<Record<string, readonly FieldOption[]>>
    | ((values: FieldValues) => Readonly<Record<string, readonly FieldOption[]>>);
  /** Metadata changes (limits from the user's quota...). */
  overrides: FieldOverrides;
}

export interface FormExtension {
  /** The feature's widgets (by `x-ui.widget` name). */
  widgets?: WidgetRegistry;
  /** Reference data, choices and overrides; `enabled` is false until the form may load them. */
  useFormData(mode: FormMode, enabled: boolean): FormData;
  /** Values of a new record. */
  defaultValues?(): FieldValues;
  /** The edit form's values from the show answer; null leaves them to the page (fields by name). */
  toFormValues?(show: Readonly<Record<string, unknown>>): FieldValues | null;
  /** Effects while editing (prefill from a chosen template...). */
  useFormEffects?(handle: SchemaFormHandle<FieldValues>, mode: FormMode): void;
  /** Why a record cannot be edited now (a translation key), beyond the state rule. */
  editBlocker?(show: Readonly<Record<string, unknown>>): string | null;
}

const extensions = new Map<string, FormExtension>();

export function registerFormExtension(name: string, extension: FormExtension): void {
  extensions.set(name, extension);
}

export function hasFormExtension(name: string): boolean {
  return extensions.has(name);
}

/**
 * The extension of a form type, or null when the type names none.
 * @throws Error naming the type when its extension is not registered
 */
export function resolveFormExtension(type: string, name: string | undefined): FormExtension | null {
  if (!name) return null;
  const extension = extensions.get(name);
  if (!extension) throw new Error(`No form extension "${name}" registered for ${type}`);
  return extension;
}
