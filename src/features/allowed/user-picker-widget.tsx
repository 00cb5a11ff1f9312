/**
 * One user, found by a search of at least the minimum length (`x-ui.widget: userPicker`): whom a
 * copy or a deployment is made for. Empty means the signed-in user.
 */
import '@mantine/core/styles/Combobox.css';
import '@mantine/core/styles/Input.css';
import { useState } from 'react';
import { Select } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { WidgetProps } from '@/resources/form/types';
import { SEARCH_MIN, useAllowedSearch } from './allowed-list-widget';

export function UserPickerWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  required,
  disabled,
}: WidgetProps) {
  const { t } = useTranslation();
  const [search, setSearch] = useState('');
  const found = useAllowedSearch('users', search);
  const chosen = typeof value === 'string' && value ? value : null;
  const [labels, setLabels] = useState<Readonly<Record<string, string>>>({});
  const data = new Map(found.map((option) => [option.value, option.label]));
  if (chosen && !data.has(chosen)) data.set(chosen, labels[chosen] ?? chosen);
  return (
    <Select
      id={id}
      label={label}
      description={description ?? t('common:allowed.searchHint', { count: SEARCH_MIN })}
      placeholder={t('common:allowed.usersSearch')}
      data={[...data].map(([option, text]) => ({ value: option, label: text }))}
      value={chosen}
      onChange={(next) => {
        if (next) setLabels((all) => ({ ...all, [next]: data.get(next) ?? next }));
        onChange(next ?? undefined);
      }}
      onBlur={onBlur}
      error={error}
      required={required}
      disabled={disabled}
      clearable
      searchable
      searchValue={search}
      onSearchChange={setSearch}
      // The server already matched the term; show every hit it sent.
      filter={({ options }) => options}
      nothingFoundMessage={
        search.trim().length < SEARCH_MIN
          ? t('common:allowed.searchHint', { count: SEARCH_MIN })
          : t('common:allowed.nothingFound')
      }
      comboboxProps={{ withinPortal: true }}
      data-testid="user-picker"
    />
  );
}
