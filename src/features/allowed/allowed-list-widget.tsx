/**
 * One sharing list of the allowed modal (`allowedUsers`, `allowedGroups`): a box that turns the
 * list on, and a search of users or groups (at least the minimum search length) to pick from.
 * The value is the wire shape: `false` (box off: the list does not apply), `[]` (box on, nobody
 * picked: everyone of the scope) or the picked ids.
 */
import '@mantine/core/styles/Checkbox.css';
import '@mantine/core/styles/Combobox.css';
import '@mantine/core/styles/Pill.css';
import '@mantine/core/styles/PillsInput.css';
import { useEffect, useState } from 'react';
import { Checkbox, MultiSelect, Stack } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { constants } from '@/generated/constants';
import type { AllowedTermResult } from '@/generated/types';
import { showError } from '@/lib/error-display';
import { request } from '@/providers/http-client';
import { useNamedValues, type NamedValue } from '@/resources/form/named-values';
import type { FieldOption, WidgetProps } from '@/resources/form/types';

export const SEARCH_MIN = constants.allowed.searchMinLength.value;
/** Keystrokes closer together than this make one search. */
const SEARCH_DELAY_MS = 250;

/** The label of a search hit: the name, and what tells two people or groups of that name apart. */
export function allowedOptionLabel(
  hit: Pick<AllowedTermResult, 'name'> &
    Partial<Record<'uid' | 'category_name' | 'group_name', unknown>>,
): string {
  const detail = [hit.uid, hit.group_name, hit.category_name].filter(
    (part): part is string => typeof part === 'string' && part !== '',
  );
  return detail.length ? `${hit.name} (${detail.join(', ')})` : hit.name;
}

/**
 * The label of an id the form started with, from the entry its action's `names` read gave it
 * (a uid that merely repeats the id says nothing); the bare id when nothing names it.
 */
export function namedOptionLabel(id: string, named: ReadonlyMap<string, NamedValue>): string {
  const entry = named.get(id);
  if (!entry) return id;
  return allowedOptionLabel({ ...entry, uid: entry.uid === id ? undefined : entry.uid });
}

/**
 * The users or groups matching a search term (from the minimum length on, debounced): the hits as
 * choices. A newer term aborts the older request.
 */
export function useAllowedSearch(table: 'users' | 'groups', search: string): FieldOption[] {
  const [found, setFound] = useState<FieldOption[]>([]);
  useEffect(() => {
    const term = search.trim();
    if (term.length < SEARCH_MIN) return;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      request('allowed.term', { params: { table }, body: { term }, signal: controller.signal })
        .then((hits) =>
          setFound((hits ?? []).map((hit) => ({ value: hit.id, label: allowedOptionLabel(hit) }))),
        )
        .catch((err: unknown) => {
          if (!controller.signal.aborted) showError(err);
        });
    }, SEARCH_DELAY_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [search, table]);
  return found;
}

export function AllowedListWidget({
  id,
  label,
  description,
  value,
  onChange,
  onBlur,
  error,
  disabled,
  meta,
  options,
}: WidgetProps) {
  const { t } = useTranslation();
  const table = meta.widget === 'allowedGroups' ? 'groups' : 'users';
  const picked = Array.isArray(value)
    ? value.filter((item): item is string => typeof item === 'string')
    : null;
  const [search, setSearch] = useState('');
  const found = useAllowedSearch(table, search);
  // The names of the entries picked so far: a later search shows other people, and a picked entry
  // keeps the name it was chosen by.
  const [named, setNamed] = useState<ReadonlyMap<string, string>>(new Map());
  // The entries the form started with, named by its action's read.
  const startNames = useNamedValues();

  // The picked entries keep their labels (from the item's expanded list or an earlier search).
  const data = new Map<string, string>(named);
  for (const option of [...(options ?? []), ...found]) data.set(option.value, option.label);
  for (const chosen of picked ?? [])
    if (!data.has(chosen)) data.set(chosen, namedOptionLabel(chosen, startNames));

  return (
    <Stack gap={6}>
      <Checkbox
        id={`${id}-on`}
        label={label}
        description={description ?? t(`common:allowed.${table}Hint`)}
        checked={picked !== null}
        disabled={disabled}
        onChange={(event) => onChange(event.currentTarget.checked ? [] : false)}
        data-testid={`allowed-${table}-on`}
      />
      {picked !== null && (
        <MultiSelect
          id={id}
          aria-label={t(`common:allowed.${table}Search`)}
          placeholder={t(`common:allowed.${table}Search`)}
          data={[...data].map(([option, text]) => ({ value: option, label: text }))}
          value={picked}
          onChange={(next) => {
            setNamed((before) => {
              const after = new Map(before);
              for (const chosen of next) {
                const text = data.get(chosen);
                if (text && text !== chosen) after.set(chosen, text);
              }
              return after;
            });
            onChange(next);
          }}
          onBlur={onBlur}
          error={error}
          disabled={disabled}
          searchable
          searchValue={search}
          onSearchChange={setSearch}
          // The server already matched the term; show every hit it sent.
          filter={({ options: all }) => all}
          nothingFoundMessage={
            search.trim().length < SEARCH_MIN
              ? t('common:allowed.searchHint', { count: SEARCH_MIN })
              : t('common:allowed.nothingFound')
          }
          comboboxProps={{ withinPortal: true }}
          data-testid={`allowed-${table}-search`}
        />
      )}
    </Stack>
  );
}
