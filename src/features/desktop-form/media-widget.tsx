import '@mantine/core/styles/Combobox.css';
import '@mantine/core/styles/Pill.css';
import '@mantine/core/styles/PillsInput.css';
import { MultiSelect, type ComboboxItem, type OptionsFilter } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { constants } from '@/generated/constants';
import type { WidgetProps } from '@/resources/form/types';

const SEARCH_MIN = constants.allowed.searchMinLength.value;

/** Matches only once the search has the minimum length. */
const minLengthFilter: OptionsFilter = ({ options, search }) => {
  const text = search.trim().toLowerCase();
  if (text.length < SEARCH_MIN) return [];
  return (options as ComboboxItem[]).filter((option) => option.label.toLowerCase().includes(text));
};

/** ISOs or floppies (`[{id}]`) chosen from the allowed media by name search. */
export function MediaWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  required,
  disabled,
  options,
}: WidgetProps) {
  const { t } = useTranslation();
  const selected = Array.isArray(value) ? (value as { id: string }[]).map((item) => item.id) : [];
  const data = (options ?? []).map((option) => ({ value: option.value, label: option.label }));
  for (const chosen of selected)
    if (!data.some((option) => option.value === chosen))
      data.push({ value: chosen, label: chosen });
  return (
    <MultiSelect
      id={id}
      label={label}
      description={description ?? t('common:desktopForm.media.searchHint', { count: SEARCH_MIN })}
      data={data}
      value={selected}
      onChange={(ids) => onChange(ids.map((item) => ({ id: item })))}
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      searchable
      filter={minLengthFilter}
      nothingFoundMessage={t('common:desktopForm.media.nothingFound', { count: SEARCH_MIN })}
      comboboxProps={{ withinPortal: true }}
    />
  );
}
