/**
 * Users found by a search of at least the minimum length (`x-ui.widget: userPicker`): one user for
 * a string field (whom a copy is made for; empty means the signed-in user), several for an array
 * field (a deployment's co-owners).
 */
import '@mantine/core/styles/Combobox.css';
import '@mantine/core/styles/Input.css';
import { useState } from 'react';
import { MultiSelect, Select, type ComboboxParsedItem } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { WidgetProps } from '@/resources/form/types';
import { useNamedValues } from '@/resources/form/named-values';
import { SEARCH_MIN, namedOptionLabel, useAllowedSearch } from './allowed-list-widget';

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
  meta,
}: WidgetProps) {
  const { t } = useTranslation();
  const [search, setSearch] = useState('');
  const found = useAllowedSearch('users', search);
  const [labels, setLabels] = useState<Readonly<Record<string, string>>>({});
  // The users the form started with, named by its action's read.
  const startNames = useNamedValues();
  const data = new Map(found.map((option) => [option.value, option.label]));
  const remember = (ids: readonly string[]) =>
    setLabels((all) => ({
      ...all,
      ...Object.fromEntries(ids.map((one) => [one, data.get(one) ?? all[one] ?? one])),
    }));
  const common = {
    id,
    label,
    description: description ?? t('common:allowed.searchHint', { count: SEARCH_MIN }),
    placeholder: t('common:allowed.usersSearch'),
    onBlur,
    error,
    required,
    disabled,
    searchable: true,
    searchValue: search,
    onSearchChange: setSearch,
    // The server already matched the term; show every hit it sent.
    filter: ({ options }: { options: ComboboxParsedItem[] }) => options,
    nothingFoundMessage:
      search.trim().length < SEARCH_MIN
        ? t('common:allowed.searchHint', { count: SEARCH_MIN })
        : t('common:allowed.nothingFound'),
    comboboxProps: { withinPortal: true },
    'data-testid': 'user-picker',
  } as const;
  if (meta.type === 'array') {
    const picked = Array.isArray(value)
      ? value.filter((one): one is string => typeof one === 'string')
      : [];
    for (const one of picked)
      if (!data.has(one)) data.set(one, labels[one] ?? namedOptionLabel(one, startNames));
    return (
      <MultiSelect
        {...common}
        data={[...data].map(([option, text]) => ({ value: option, label: text }))}
        value={picked}
        onChange={(next) => {
          remember(next);
          onChange(next);
        }}
      />
    );
  }
  const chosen = typeof value === 'string' && value ? value : null;
  if (chosen && !data.has(chosen))
    data.set(chosen, labels[chosen] ?? namedOptionLabel(chosen, startNames));
  return (
    <Select
      {...common}
      data={[...data].map(([option, text]) => ({ value: option, label: text }))}
      value={chosen}
      onChange={(next) => {
        if (next) remember([next]);
        onChange(next ?? undefined);
      }}
      clearable
    />
  );
}
