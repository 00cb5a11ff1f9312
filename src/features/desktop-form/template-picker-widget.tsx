import '@mantine/core/styles/Combobox.css';
import { Select, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { WidgetProps } from '@/resources/form/types';

/** Template choice: a searchable list of the allowed templates (`options`), with the description shown. */
export function TemplatePickerWidget({
  id,
  label,
  value,
  onChange,
  onBlur,
  error,
  required,
  disabled,
  options,
}: WidgetProps) {
  const { t } = useTranslation();
  const list = options ?? [];
  const chosen = list.find((option) => option.value === value);
  return (
    <div>
      <Select
        id={id}
        label={label}
        description={t('common:desktopForm.template.hint')}
        placeholder={t('common:desktopForm.template.placeholder')}
        data={list.map((option) => ({ value: option.value, label: option.label }))}
        value={typeof value === 'string' && value ? value : null}
        onChange={(next) => onChange(next ?? undefined)}
        onBlur={onBlur}
        error={error}
        required={required}
        disabled={disabled}
        searchable
        nothingFoundMessage={t('common:desktopForm.template.none')}
        comboboxProps={{ withinPortal: true }}
      />
      {chosen?.description && (
        <Text size="sm" c="dimmed" mt={4} data-testid="template-description">
          {chosen.description}
        </Text>
      )}
    </div>
  );
}
