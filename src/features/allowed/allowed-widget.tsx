/**
 * The `allowed` field of a create form (a new template or medium shared at once): the users and
 * groups lists of the sharing object, each drawn by the allowed-list widget. Roles and categories
 * are not offered; they stay as they are (`false` when new).
 */
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
  const value =
    props.value && typeof props.value === 'object' ? (props.value as Record<string, unknown>) : {};
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
