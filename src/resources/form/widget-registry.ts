/**
 * Widget registry (rjsf getWidget, but failing loudly): a field's widget is its `x-ui.widget`
 * (codegen fills the type default: enum -> select, boolean -> switch, number/integer -> number,
 * array -> multiSelect, else text); `secret` text becomes a password. A name nobody registered
 * throws an Error naming the field and the widget instead of silently rendering a text box.
 */
import type { FieldMeta } from '@/generated/fields';
import { MultiSelectWidget } from './multi-select-widget';
import { NullableObjectWidget } from './nullable-object-widget';
import { NumberWidget } from './number-widget';
import { PasswordWidget } from './password-widget';
import { RoleMatrixWidget } from './role-matrix-widget';
import { SelectWidget } from './select-widget';
import { CheckboxWidget, SwitchWidget } from './switch-widget';
import { TextWidget } from './text-widget';
import { TextareaWidget } from './textarea-widget';
import type { WidgetComponent, WidgetRegistry } from './types';

/**
 * The widgets every form has: the generic ones, and those features register at start-up for
 * fields of several resources (`allowed`). A form extension adds its form's own (`viewerPicker`).
 */
export const baseWidgets: Record<string, WidgetComponent> = {
  text: TextWidget,
  url: TextWidget,
  email: TextWidget,
  textarea: TextareaWidget,
  // A text in HTML is edited as its source.
  html: TextareaWidget,
  password: PasswordWidget,
  number: NumberWidget,
  select: SelectWidget,
  multiSelect: MultiSelectWidget,
  switch: SwitchWidget,
  checkbox: CheckboxWidget,
  roleMatrix: RoleMatrixWidget,
  /** An optional object (`anyOf: [object, null]`): a switch; its fields show while it is on. */
  nullableObject: NullableObjectWidget,
  /** A quota limit (its cell draws the usage bar): a number, blank = no limit. */
  quota: NumberWidget,
};

/** Adds (or replaces) a widget every form can use. */
export function registerWidget(name: string, widget: WidgetComponent): void {
  baseWidgets[name] = widget;
}

/** Widget name for a field when the metadata names none (type defaults). */
export function defaultWidgetName(meta: Pick<FieldMeta, 'type' | 'enum' | 'secret'>): string {
  if (meta.enum || meta.type === 'enum') return 'select';
  if (meta.type === 'boolean') return 'switch';
  if (meta.type === 'number' || meta.type === 'integer') return 'number';
  if (meta.type === 'array') return 'multiSelect';
  return meta.secret ? 'password' : 'text';
}

/** Widget name the registry is asked for. */
export function widgetNameOf(meta: FieldMeta): string {
  const name = meta.widget || defaultWidgetName(meta);
  return name === 'text' && meta.secret ? 'password' : name;
}

/**
 * Resolves the widget of a field.
 * @param meta generated field metadata
 * @param registry base widgets merged with the feature's widgets
 * @returns the widget component
 * @throws Error when the widget name is not registered
 */
export function resolveWidget(
  meta: FieldMeta,
  registry: WidgetRegistry = baseWidgets,
): WidgetComponent {
  const name = widgetNameOf(meta);
  const widget = registry[name];
  if (!widget)
    throw new Error(`No widget "${name}" registered for field "${meta.path}" (type ${meta.type})`);
  return widget;
}
