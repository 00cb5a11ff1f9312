/**
 * The `roleMatrix` input widget: the role-visibility config (roles, fields, actions) as one
 * collapsible panel per resource, each with role checkboxes for its role sets, its fields and its
 * actions, and a search box over resources, fields and actions. The catalogue (what may be named,
 * with the defaults) comes from the `roleVisibility.show` answer; the value is the config.
 */
import '@mantine/core/styles/Accordion.css';
import '@mantine/core/styles/Checkbox.css';
import '@mantine/core/styles/Table.css';
import { useCallback, useMemo, useState } from 'react';
import {
  Accordion,
  Alert,
  Badge,
  Checkbox,
  Group,
  Loader,
  Stack,
  Table,
  Text,
  TextInput,
} from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { roles as allRoles } from '@/generated/roles';
import type {
  RoleVisibility,
  RoleVisibilityCatalogueResource,
  RoleVisibilityConfig,
} from '@/generated/types';
import { requestOperation } from '@/providers/http-client';
import {
  changedCount,
  entryRoles,
  matchesSearch,
  toggleRole,
  type MatrixPart,
} from './role-matrix';
import type { WidgetProps } from './types';

/** The catalogue query (shared with the details page's answer through its own key). */
export const ROLE_MATRIX_QUERY = ['role-matrix', 'catalogue'] as const;

function asConfig(value: unknown): RoleVisibilityConfig {
  return value && typeof value === 'object' ? (value as RoleVisibilityConfig) : {};
}

interface PartTableProps {
  id: string;
  resource: RoleVisibilityCatalogueResource;
  part: MatrixPart;
  names: readonly string[];
  labelOf: (name: string) => string;
  config: RoleVisibilityConfig;
  disabled: boolean;
  onChange: (config: RoleVisibilityConfig) => void;
}

function PartTable({
  id,
  resource,
  part,
  names,
  labelOf,
  config,
  disabled,
  onChange,
}: PartTableProps) {
  const { t } = useTranslation();
  if (names.length === 0) return null;
  const captionId = `${id}-${resource.name}-${part}`;
  return (
    <Table striped withTableBorder aria-labelledby={captionId} data-part={part}>
      <Table.Thead>
        <Table.Tr>
          <Table.Th id={captionId}>{t(`resources:roleVisibility.matrix.${part}`)}</Table.Th>
          {allRoles.map((role) => (
            <Table.Th key={role}>{t(`resources:roleVisibility.roles.${role}`)}</Table.Th>
          ))}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {names.map((name) => {
          const current = entryRoles(config, resource, part, name);
          return (
            <Table.Tr key={name} data-entry={name}>
              <Table.Td>{labelOf(name)}</Table.Td>
              {allRoles.map((role) => (
                <Table.Td key={role}>
                  <Checkbox
                    aria-label={t('resources:roleVisibility.matrix.toggle', {
                      entry: labelOf(name),
                      role: t(`resources:roleVisibility.roles.${role}`),
                    })}
                    checked={current.includes(role)}
                    disabled={disabled}
                    onChange={(event) =>
                      onChange(
                        toggleRole(config, resource, part, name, role, event.currentTarget.checked),
                      )
                    }
                  />
                </Table.Td>
              ))}
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

export function RoleMatrixWidget({
  id,
  label,
  description,
  value,
  onChange,
  error,
  disabled,
}: WidgetProps) {
  const { t } = useTranslation();
  const [search, setSearch] = useState('');
  const config = asConfig(value);
  const catalogue = useQuery({
    queryKey: ROLE_MATRIX_QUERY,
    queryFn: async () => (await requestOperation('roleVisibility.show')) as RoleVisibility,
    staleTime: 0,
  });
  const resourceLabel = useCallback(
    (name: string) =>
      t(`resources:${name}.title`, {
        defaultValue: t(`common:nav.${name}`, { defaultValue: name }),
      }),
    [t],
  );
  const resources = useMemo(
    () =>
      (catalogue.data?.catalogue ?? []).filter((resource) =>
        matchesSearch(resource, resourceLabel(resource.name), search),
      ),
    [catalogue.data, search, resourceLabel],
  );

  return (
    <Stack gap="sm" id={id} data-widget="roleMatrix">
      <Text fw={500}>{label}</Text>
      {description ? (
        <Text size="sm" c="dimmed">
          {description}
        </Text>
      ) : null}
      <TextInput
        label={t('resources:roleVisibility.matrix.search')}
        value={search}
        onChange={(event) => setSearch(event.currentTarget.value)}
        data-testid="role-matrix-search"
      />
      {error ? (
        <Alert color="red" role="alert">
          {error}
        </Alert>
      ) : null}
      {catalogue.isPending ? <Loader size="sm" aria-label={t('common:loading')} /> : null}
      {catalogue.isError ? (
        <Alert color="red" role="alert">
          {t('resources:roleVisibility.matrix.loadFailed')}
        </Alert>
      ) : null}
      <Accordion multiple variant="separated">
        {resources.map((resource) => {
          const changed = changedCount(config, resource.name);
          return (
            <Accordion.Item key={resource.name} value={resource.name} data-resource={resource.name}>
              <Accordion.Control>
                <Group gap="xs">
                  <Text>{resourceLabel(resource.name)}</Text>
                  {changed > 0 ? (
                    <Badge size="sm" variant="light">
                      {t('resources:roleVisibility.matrix.changed', { count: changed })}
                    </Badge>
                  ) : null}
                </Group>
              </Accordion.Control>
              <Accordion.Panel>
                <Stack gap="sm">
                  {(['roles', 'fields', 'actions'] as const).map((part) => (
                    <PartTable
                      key={part}
                      id={id}
                      resource={resource}
                      part={part}
                      names={
                        part === 'roles'
                          ? Object.keys(resource.sets)
                          : part === 'fields'
                            ? resource.fields
                            : resource.actions
                      }
                      labelOf={(name) =>
                        part === 'roles'
                          ? t(`resources:roleVisibility.sets.${name}`, { defaultValue: name })
                          : part === 'fields'
                            ? t(`resources:${resource.name}.fields.${name}`, { defaultValue: name })
                            : t(`resources:${resource.name}.stateActions.${name}`, {
                                defaultValue: name,
                              })
                      }
                      config={config}
                      disabled={disabled}
                      onChange={onChange}
                    />
                  ))}
                </Stack>
              </Accordion.Panel>
            </Accordion.Item>
          );
        })}
      </Accordion>
    </Stack>
  );
}
