/**
 * The switch of an optional object (`anyOf: [object, null]`, e.g. a quota of its own): on gives
 * the field an object (the values it had before it was switched off, else an empty one) and the
 * form shows the object's fields under it; off sends null. A field never set stays off.
 */
import '@mantine/core/styles/Switch.css';
import { Switch } from '@mantine/core';
import { useRef } from 'react';
import type { WidgetProps } from './types';

/** Whether an optional object's value is set (an object, not null or absent). */
export function isSetObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function NullableObjectWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  disabled,
}: WidgetProps) {
  // What the object held before it was switched off comes back when it is switched on again.
  const last = useRef<Record<string, unknown>>({});
  const toggle = (on: boolean): void => {
    if (on) {
      onChange({ ...last.current });
      return;
    }
    if (isSetObject(value)) last.current = value;
    onChange(null);
  };
  return (
    <Switch
      id={id}
      label={label}
      description={description}
      checked={isSetObject(value)}
      onChange={(event) => toggle(event.currentTarget.checked)}
      onBlur={onBlur}
      error={error}
      disabled={disabled}
      data-testid="nullable-object-switch"
    />
  );
}
