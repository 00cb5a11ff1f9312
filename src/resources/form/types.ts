/**
 * The one props contract every field widget receives (rjsf's WidgetProps, trimmed): any widget can
 * replace any other, and the registry picks one per field from the generated `FieldMeta`.
 */
import type { ComponentType } from 'react';
import type { FieldMeta } from '@/generated/fields';

/** One choice of a select-like widget. `label` is already translated (or server data). */
export interface FieldOption {
  value: string;
  label: string;
  description?: string | null;
  disabled?: boolean;
}

export interface WidgetProps {
  /** DOM id of the input (labels and error descriptions hang off it). */
  id: string;
  /** Dotted path of the value in the form (`hardware.memory`). */
  path: string;
  /** Translated label. */
  label: string;
  /** Translated help text, if any. */
  description?: string | undefined;
  /** Current value (shape depends on the field). */
  value: unknown;
  /** Sets the value. Widgets hand back the wire shape (numbers as numbers, '' as undefined). */
  onChange: (value: unknown) => void;
  onBlur: () => void;
  /** Translated error message, if any (Mantine links it with aria-describedby). */
  error?: string | undefined;
  /** Shows the required mark. */
  required: boolean;
  disabled: boolean;
  /** Generated field metadata (after page overrides such as quota maxima). */
  meta: FieldMeta;
  /** Choices for select-like widgets (from the page: allowed hardware, media, templates...). */
  options?: readonly FieldOption[] | undefined;
}

export type WidgetComponent = ComponentType<WidgetProps>;

/** Widget name (`x-ui.widget`) -> component. */
export type WidgetRegistry = Readonly<Record<string, WidgetComponent>>;

/** Per-path metadata overrides a page applies (quota maxima, section placement). */
export type FieldOverrides = Readonly<Record<string, Partial<FieldMeta>>>;
