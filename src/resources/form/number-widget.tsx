import '@mantine/core/styles/NumberInput.css';
import { NumberInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { WidgetProps } from './types';

/** Number with the field's min/max/step and unit (label "Memory (GB)"); empty = undefined. */
export function NumberWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  required,
  disabled,
  meta,
}: WidgetProps) {
  const { t } = useTranslation();
  const integer = meta.type === 'integer';
  return (
    <NumberInput
      id={id}
      label={meta.unit ? t('common:form.withUnit', { label, unit: meta.unit }) : label}
      description={description}
      value={typeof value === 'number' ? value : ''}
      onChange={(next) =>
        onChange(typeof next === 'number' ? next : next === '' ? undefined : Number(next))
      }
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      min={meta.minimum}
      max={meta.maximum}
      step={meta.step ?? 1}
      allowDecimal={!integer}
      clampBehavior="none"
    />
  );
}
