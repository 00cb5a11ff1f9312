import { describe, expect, it } from 'vitest';
import type { FieldMeta } from '@/generated/fields';
import { fieldsOf } from './field-meta';
import { NumberWidget } from './number-widget';
import { PasswordWidget } from './password-widget';
import { SelectWidget } from './select-widget';
import { SwitchWidget } from './switch-widget';
import { TextWidget } from './text-widget';
import { TextareaWidget } from './textarea-widget';
import { defaultWidgetName, resolveWidget } from './widget-registry';

const field = (path: string): FieldMeta => {
  const meta = fieldsOf('DesktopCreate').find((item) => item.path === path);
  if (!meta) throw new Error(`no field ${path}`);
  return meta;
};

describe('resolveWidget', () => {
  it('picks the widget named by x-ui.widget and the type defaults', () => {
    expect(resolveWidget(field('name'))).toBe(TextWidget);
    expect(resolveWidget(field('description'))).toBe(TextareaWidget);
    expect(resolveWidget(field('hardware.memory'))).toBe(NumberWidget);
    expect(resolveWidget(field('hardware.disk_bus'))).toBe(SelectWidget);
    expect(resolveWidget(field('guest_properties.fullscreen'))).toBe(SwitchWidget);
  });

  it('renders secret text as a password', () => {
    expect(resolveWidget(field('guest_properties.credentials.password'))).toBe(PasswordWidget);
  });

  it('throws an error naming the field and the widget when nobody registered the widget', () => {
    expect(() => resolveWidget(field('guest_properties.viewers'))).toThrow(
      /"viewerPicker".*"guest_properties\.viewers"/,
    );
    expect(() => resolveWidget({ ...field('name'), widget: 'colourWheel' })).toThrow(
      'No widget "colourWheel" registered for field "name"',
    );
  });

  it('derives a widget from the type when the metadata names none', () => {
    expect(defaultWidgetName({ type: 'enum', enum: ['a'], secret: false })).toBe('select');
    expect(defaultWidgetName({ type: 'boolean', secret: false })).toBe('switch');
    expect(defaultWidgetName({ type: 'integer', secret: false })).toBe('number');
    expect(defaultWidgetName({ type: 'string', secret: true })).toBe('password');
  });
});
