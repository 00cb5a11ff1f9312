/**
 * The allowed users and groups of a shared item (a template, a medium): what the item's sharing
 * lists hold now (`allowed.table`), edited with the generated form of the update body (its
 * `allowedUsers` / `allowedGroups` widgets) and saved with `allowed.update`.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useMemo } from 'react';
import { Alert, Button, Group, Modal, Skeleton, Stack, Text } from '@mantine/core';
import { useNotification } from '@refinedev/core';
import { useQuery } from '@tanstack/react-query';
import type { ValidateFunction } from 'ajv';
import { useTranslation } from 'react-i18next';
import { formValidators } from '@/generated/form-validators';
import type { AllowedExpanded, AllowedTableParams, AllowedUpdateRequest } from '@/generated/types';
import { showError, translateError } from '@/lib/error-display';
import { request } from '@/providers/http-client';
import { SchemaForm } from '@/resources/form/schema-form';
import type { FieldOption } from '@/resources/form/types';
import { useSchemaForm } from '@/resources/form/use-schema-form';
import { allowedOptionLabel, AllowedListWidget } from './allowed-list-widget';

const WIDGETS = { allowedUsers: AllowedListWidget, allowedGroups: AllowedListWidget };

type Table = AllowedTableParams['table'];

export interface AllowedModalProps {
  table: Table;
  id: string;
  /** The item's name, in the title. */
  name: string;
  onClose: () => void;
}

/** The sharing lists as the form holds them: `false`, or the ids. */
function listIds(list: AllowedExpanded['users'] | AllowedExpanded['groups']): false | string[] {
  return Array.isArray(list) ? list.map((item) => item.id) : false;
}

export function AllowedModal({ table, id, name, onClose }: AllowedModalProps) {
  const { t } = useTranslation();
  const current = useQuery({
    queryKey: ['allowed', table, id],
    queryFn: () => request('allowed.table', { params: { table }, body: { id } }),
    staleTime: 0,
  });
  const validator = useQuery({
    queryKey: ['form-validator', 'AllowedUpdateRequest'],
    queryFn: () => {
      const load = formValidators.AllowedUpdateRequest;
      if (!load) throw new Error('AllowedUpdateRequest has no form validator');
      return load();
    },
    staleTime: Infinity,
  });
  return (
    <Modal
      opened
      onClose={onClose}
      title={t('common:allowed.title', { name })}
      size="lg"
      centered
      data-testid="allowed-modal"
    >
      {current.isError ? (
        <Alert color="red" role="alert">
          {translateError(current.error as never)}
        </Alert>
      ) : current.data && validator.data ? (
        <AllowedForm
          table={table}
          id={id}
          expanded={current.data}
          validate={validator.data}
          onClose={onClose}
        />
      ) : (
        <Stack gap="sm" aria-busy="true">
          <Skeleton height={36} />
          <Skeleton height={36} />
        </Stack>
      )}
    </Modal>
  );
}

function AllowedForm({
  table,
  id,
  expanded,
  validate,
  onClose,
}: {
  table: Table;
  id: string;
  expanded: AllowedExpanded;
  validate: ValidateFunction;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const { open } = useNotification();
  const handle = useSchemaForm<AllowedUpdateRequest>({
    type: 'AllowedUpdateRequest',
    validate,
    resource: 'allowed',
    defaultValues: {
      id,
      table,
      allowed: { users: listIds(expanded.users), groups: listIds(expanded.groups) },
    },
  });
  // The picked users and groups keep their names while the lists are edited.
  const options = useMemo<Record<string, FieldOption[]>>(
    () => ({
      'allowed.users': (expanded.users || []).map((user) => ({
        value: user.id,
        label: allowedOptionLabel(user),
      })),
      'allowed.groups': (expanded.groups || []).map((group) => ({
        value: group.id,
        label: allowedOptionLabel(group),
      })),
    }),
    [expanded],
  );
  const { form } = handle;
  const save = form.handleSubmit(async (values) => {
    try {
      await request('allowed.update', { params: { table }, body: values });
      open?.({ type: 'success', message: t('common:allowed.saved') });
      onClose();
    } catch (error) {
      if (!handle.applyServerErrors(error)) showError(error);
    }
  }, handle.focusFirstError);
  return (
    <form onSubmit={(event) => void save(event)} noValidate>
      <Stack gap="md">
        <Text size="sm" c="dimmed">
          {t('common:allowed.intro')}
        </Text>
        <SchemaForm
          handle={handle}
          widgets={WIDGETS}
          options={options}
          exclude={['id', 'table']}
          headingOrder={3}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose} disabled={form.formState.isSubmitting}>
            {t('common:actions.cancel')}
          </Button>
          <Button type="submit" loading={form.formState.isSubmitting} data-testid="allowed-save">
            {t('common:form.save')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
