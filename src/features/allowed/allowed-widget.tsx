/**
 * The `allowed` field of a form (a new deployment's users, a deployment's Edit users, a profile's
 * extra users): the users and groups lists of the sharing object, each drawn by the allowed-list
 * widget. The field holds those two lists only (the share lists the bodies take): a record's
 * roles and categories lists, which these forms neither offer nor send, are dropped when the
 * form starts from it.
 */
import { useEffect, useMemo } from 'react';
import { Stack } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { WidgetProps } from '@/resources/form/types';
import { AllowedListWidget } from './allowed-list-widget';

const LISTS = [
  { key: 'users', widget: 'allowedUsers' },
  { key: 'groups', widget: 'allowedGroups' },
] as const;

export function AllowedWidget(props: WidgetProps) {
  const { t } = useTranslation();
  const { value: held, onChange } = props;
  const value = useMemo(
    () => (held && typeof held === 'object' ? (held as Record<string, unknown>) : {}),
    [held],
  );
  useEffect(() => {
    if (Object.keys(value).some((key) => !LISTS.some((list) => list.key === key)))
      onChange(
        Object.fromEntries(
          LISTS.flatMap(({ key }) => (value[key] === undefined ? [] : [[key, value[key]]])),
        ),
      );
  }, [value, onChange]);
  return (
    <Stack gap="sm" role="group" aria-label={props.label}>
      {LISTS.map(({ key, widget }) => (
        <AllowedListWidget
          key={key}
          {...props}
          id={`${props.id}-${key}`}
          path={`${props.path}.${key}`}
          label={t(`resources:allowed.fields.allowed.${key}`)}
          description={undefined}
          value={value[key] ?? false}
          onChange={(list) => props.onChange({ ...value, [key]: list })}
          meta={{ ...props.meta, path: `${props.meta.path}.${key}`, widget }}
          options={undefined}
        />
      ))}
    </Stack>
  );
}
