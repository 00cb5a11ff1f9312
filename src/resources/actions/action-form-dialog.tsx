/**
 * The dialog of an action that asks a form (`x-actions.actions.<name>.form`): the generated form
 * of its operation's request body, without the fields the action fills from the record or fixes,
 * prefilled with the record's values of the same fields (or those `prefill` names), validated by
 * the same precompiled validator the server uses. `fields` narrows it to the fields the action is
 * about (a profile's name, not its password): only those are asked and sent. Server field errors
 * land on their fields; others show as an alert. After success it closes, or shows the answer
 * (`result`) until the user closes it; then the action's `then` route opens. With `names`, the
 * form waits for that read of the record and its pickers show the ids it starts with by name.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useMemo, useRef, useState } from 'react';
import { Box, Button, Group, Loader, Modal } from '@mantine/core';
import { useNotification } from '@refinedev/core';
import { useQuery } from '@tanstack/react-query';
import type { ValidateFunction } from 'ajv';
import type { FieldValues } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { fields, type FieldMeta } from '@/generated/fields';
import { formValidators } from '@/generated/form-validators';
import type { ActionDefinition } from '@common/state-actions';
import { SubmitButton } from '@/components/submit-button';
import { showError } from '@/lib/error-display';
import { useSessionState } from '@/lib/session-state';
import { requestOperation } from '@/providers/http-client';
import { pickFormValues } from '../form/form-values';
import { schemaDefaults } from '../form/schema-defaults';
import { getIn, type FieldsType } from '../form/field-meta';
import { useOperationOptions } from '../form/operation-options';
import { SchemaForm } from '../form/schema-form';
import { useSchemaForm } from '../form/use-schema-form';
import { actionDoneMessage } from './action-done';
import { ActionPreview } from './action-preview';
import { ActionResult } from './action-result';
import { thenHref, useActionSuccess } from './action-success';
import { namedValuesOf, NamedValuesProvider } from '../form/named-values';
import { filledInputs, operationInputs, operationOf } from './operation-inputs';
import { titleWithName } from './record-operation';

type Values = Readonly<Record<string, unknown>>;

export interface ActionFormDialogProps {
  resource: string;
  record: Values;
  /** The action's name in the schema. */
  name: string;
  def: ActionDefinition;
  /** What the action is about (the record's title). */
  title: string;
  /** Called once the operation succeeded. */
  onDone?: ((operation: string) => void) | undefined;
  onClose: () => void;
}

/** The top-level name of a field path (`hardware.memory` -> `hardware`). */
const topOf = (path: string): string => path.split('.')[0] ?? path;

/**
 * The values the form starts from: the record's (or `prefill`'s, whose record field may be a
 * dotted path into a nested object), limited to the asked fields.
 */
export function initialActionValues(
  def: Pick<ActionDefinition, 'fields' | 'prefill'>,
  list: readonly FieldMeta[],
  record: Values,
): FieldValues {
  const renamed = Object.fromEntries(
    Object.entries(def.prefill ?? {}).flatMap(([field, from]) => {
      const value = getIn(record, from);
      return value === undefined || value === null ? [] : [[field, value]];
    }),
  );
  const values = { ...pickFormValues(list, record), ...renamed };
  return def.fields ? keepFields(values, def.fields) : values;
}

/** Only the entries whose top-level name is one of `names`. */
function keepFields(values: Readonly<Record<string, unknown>>, names: readonly string[]) {
  return Object.fromEntries(Object.entries(values).filter(([key]) => names.includes(topOf(key))));
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
  // The read that names the ids the form starts with (the users already chosen).
  const namesOperation = props.def.names ?? null;
  const namesParams = namesOperation
    ? operationInputs(props.resource, namesOperation, props.def, props.record).params
    : {};
  const names = useQuery({
    queryKey: [`${props.resource}.${namesOperation ?? ''}`, namesParams],
    queryFn: () =>
      requestOperation(`${props.resource}.${namesOperation ?? ''}`, { params: namesParams }),
    enabled: namesOperation !== null,
    staleTime: 0,
  });
  const named = useMemo(() => namedValuesOf(names.data), [names.data]);
  // Without its names the form would show bare ids: it waits for them (a failed read does not
  // keep it closed).
  const namesSettled = namesOperation === null || names.isFetched;
  const label = t(`resources:${props.resource}.stateActions.${props.name}`);
  const navigate = useNavigate();
  const [answer, setAnswer] = useState<{ value: unknown } | null>(null);
  const succeeded = useRef(false);
  const close = (): void => {
    props.onClose();
    const href = succeeded.current ? thenHref(props.resource, props.def, props.record) : null;
    if (href) void navigate(href);
  };
  const done = (value: unknown): void => {
    succeeded.current = true;
    if (props.def.result) setAnswer({ value });
    else close();
  };
  return (
    <Modal
      opened
      onClose={close}
      title={titleWithName(label, props.title)}
      centered
      size="lg"
      // An answer shown once is not lost to a stray click outside.
      closeOnClickOutside={!answer}
    >
      {answer ? (
        <ActionResult
          resource={props.resource}
          name={props.name}
          operation={props.def.operation ?? ''}
          answer={answer.value}
          hintWhen={props.def.resultHintWhen}
          onClose={close}
        />
      ) : validator.data && namesSettled ? (
        <NamedValuesProvider value={named}>
          <LoadedActionForm
            {...props}
            onClose={close}
            onSuccess={done}
            type={type}
            validate={validator.data}
            label={label}
          />
        </NamedValuesProvider>
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
  onDone,
  onClose,
  onSuccess,
  type,
  validate,
  label,
}: ActionFormDialogProps & {
  type: string;
  validate: ValidateFunction;
  label: string;
  /** Called with the answer once the operation succeeded and its effect ran. */
  onSuccess: (answer: unknown) => void;
}) {
  const { t } = useTranslation();
  const { open } = useNotification();
  const success = useActionSuccess();
  const role = useSessionState().user?.role_id ?? null;
  const list = useMemo(
    () => (fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? [],
    [type],
  );
  // What the action sets itself is not asked; nor what the role may not write, nor the fields
  // outside the action's `fields`.
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
            fixed.has(topOf(meta.path)) ||
            (def.fields && !def.fields.includes(topOf(meta.path))) ||
            (meta.roles?.write && (!role || !meta.roles.write.includes(role))),
        )
        .map((meta) => meta.path),
    [list, fixed, role, def.fields],
  );
  const [initial] = useState<FieldValues>(() => initialActionValues(def, list, record));
  // Only fields of the form's type (the validator refuses others, an id the path carries) and,
  // with `fields`, only those: a name change does not send the record's email back.
  const known = useMemo(
    () =>
      new Set(
        list
          .map((meta) => topOf(meta.path))
          .filter((name) => !def.fields || def.fields.includes(name)),
      ),
    [list, def.fields],
  );
  const handle = useSchemaForm<FieldValues>({
    type: type as FieldsType,
    validate,
    resource,
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
      const operation = def.operation ?? '';
      const sent = def.fields ? keepFields(values, def.fields) : values;
      const inputs = operationInputs(resource, operation, def, record, sent);
      const answer = await requestOperation(`${resource}.${operation}`, {
        params: inputs.params,
        ...(inputs.body ? { body: inputs.body } : {}),
      });
      open?.({
        type: 'success',
        message: actionDoneMessage(t, resource, operation, label, title),
      });
      onDone?.(operation);
      await success({ resource, name, def, record, values: sent, answer });
      onSuccess(answer);
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
