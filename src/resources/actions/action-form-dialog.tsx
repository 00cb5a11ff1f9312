/**
 * The dialog of an action that asks a form (`x-actions.actions.<name>.form`): the generated form
 * of its operation's request body, without the fields the action fills from the record or fixes,
 * prefilled with the record's values of the same fields, validated by the same precompiled
 * validator the server uses. Server field errors land on their fields; others show as an alert.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useMemo, useState } from 'react';
import { Box, Button, Group, Loader, Modal } from '@mantine/core';
import { useNotification } from '@refinedev/core';
import { useQuery } from '@tanstack/react-query';
import type { ValidateFunction } from 'ajv';
import type { FieldValues } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { fields, type FieldMeta } from '@/generated/fields';
import { formValidators } from '@/generated/form-validators';
import type { ActionDefinition } from '@common/state-actions';
import { SubmitButton } from '@/components/submit-button';
import { showError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import { requestOperation } from '@/providers/http-client';
import { pickFormValues } from '../form/form-values';
import { schemaDefaults } from '../form/schema-defaults';
import type { FieldsType } from '../form/field-meta';
import { useOperationOptions } from '../form/operation-options';
import { SchemaForm } from '../form/schema-form';
import { useSchemaForm } from '../form/use-schema-form';
import { ActionPreview } from './action-preview';
import { filledInputs, operationInputs, operationOf } from './operation-inputs';

type Values = Readonly<Record<string, unknown>>;

export interface ActionFormDialogProps {
  resource: string;
  record: Values;
  /** The action's name in the schema. */
  name: string;
  def: ActionDefinition;
  /** What the action is about (the record's title). */
  title: string;
  onClose: () => void;
}

export function ActionFormDialog(props: ActionFormDialogProps) {
  const { t } = useTranslation();
  const op = operationOf(props.resource, props.def.operation ?? '');
  // An operation without a body asks its path parameters (a disk's increase).
  const type = op.request ?? op.params ?? '';
  const load = formValidators[type];
  if (!load) throw new Error(`${op.key} has no form validator for ${type}`);
  const validator = useQuery({
    queryKey: ['form-validator', type],
    queryFn: load,
    staleTime: Infinity,
  });
  const label = t(`resources:${props.resource}.stateActions.${props.name}`);
  return (
    <Modal opened onClose={props.onClose} title={`${label} · ${props.title}`} centered size="lg">
      {validator.data ? (
        <LoadedActionForm {...props} type={type} validate={validator.data} label={label} />
      ) : (
        <Group justify="center" p="lg">
          <Loader size="sm" aria-label={t('common:loading')} />
        </Group>
      )}
    </Modal>
  );
}

function LoadedActionForm({
  resource,
  record,
  name,
  def,
  title,
  onClose,
  type,
  validate,
  label,
}: ActionFormDialogProps & { type: string; validate: ValidateFunction; label: string }) {
  const { t } = useTranslation();
  const { open } = useNotification();
  const role = useSessionState().user?.role_id ?? null;
  const list = useMemo(
    () => (fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? [],
    [type],
  );
  // What the action sets itself is not asked; nor what the role may not write.
  const fixed = useMemo(
    () =>
      new Set([
        ...Object.keys(filledInputs(resource, def, record)),
        ...Object.keys(def.body ?? {}),
      ]),
    [resource, def, record],
  );
  const exclude = useMemo(
    () =>
      list
        .filter(
          (meta) =>
            fixed.has(meta.path.split('.')[0] ?? meta.path) ||
            (meta.roles?.write && (!role || !meta.roles.write.includes(role))),
        )
        .map((meta) => meta.path),
    [list, fixed, role],
  );
  const [initial] = useState<FieldValues>(() => pickFormValues(list, record));
  const known = useMemo(
    () => new Set(list.map((meta) => meta.path.split('.')[0] ?? meta.path)),
    [list],
  );
  const handle = useSchemaForm<FieldValues>({
    type: type as FieldsType,
    validate,
    resource,
    // Only fields of the form's type: the validator refuses others (an id the path carries).
    defaultValues: Object.fromEntries(
      Object.entries({
        ...structuredClone(schemaDefaults(type)),
        ...initial,
        ...filledInputs(resource, def, record),
        ...def.body,
      }).filter(([key]) => known.has(key)),
    ),
  });
  const options = useOperationOptions(list, role);
  const [busy, setBusy] = useState(false);
  const codes = useMemo(
    () =>
      Object.fromEntries(
        list.flatMap((meta) => (meta.codes ?? []).map((code) => [code, meta.path])),
      ),
    [list],
  );
  const submit = handle.form.handleSubmit(async (values) => {
    setBusy(true);
    try {
      const inputs = operationInputs(resource, def.operation ?? '', def, record, values);
      await requestOperation(`${resource}.${def.operation ?? ''}`, {
        params: inputs.params,
        ...(inputs.body ? { body: inputs.body } : {}),
      });
      open?.({
        type: 'success',
        message: t('common:actions.done', { action: label, name: title }),
      });
      onClose();
    } catch (error) {
      if (!handle.applyServerErrors(error, codes)) showError(error);
      setBusy(false);
    }
  }, handle.focusFirstError);
  return (
    <form onSubmit={(event) => void submit(event)} noValidate data-action-form={name}>
      {def.preview && (
        <Box mb="md">
          <ActionPreview resource={resource} record={record} def={def} />
        </Box>
      )}
      <SchemaForm handle={handle} options={options} exclude={exclude} headingOrder={3} />
      <Group justify="flex-end" mt="md">
        <Button variant="default" onClick={onClose} disabled={busy}>
          {t('common:actions.cancel')}
        </Button>
        <SubmitButton loading={busy} color={def.color}>
          {def.operation === 'update' ? t('common:form.save') : label}
        </SubmitButton>
      </Group>
    </form>
  );
}
