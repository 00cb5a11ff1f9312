import { PasswordInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { WidgetProps } from './types';

/** Secret text (`x-ui.secret`): masked, with a labelled reveal toggle. */
export function PasswordWidget({
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
  return (
    <PasswordInput
      id={id}
      label={label}
      description={description}
      value={typeof value === 'string' ? value : ''}
      onChange={(event) =>
        onChange(event.currentTarget.value === '' ? undefined : event.currentTarget.value)
      }
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      maxLength={meta.maxLength}
      autoComplete="new-password"
      visibilityToggleButtonProps={{ 'aria-label': t('common:form.showPassword') }}
    />
  );
}
