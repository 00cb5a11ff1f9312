/**
 * The answer of an action with `result` (`x-actions.actions.<name>.result`), shown once in its
 * dialog instead of closing it: the fields of the operation's response type through the cell
 * renderers (a secret through `copy`, with its copy button), under the action's hint
 * (`resources:<resource>.resultHints.<action>`: it will not be shown again, how long it is valid;
 * with `resultHintWhen`, only when that field of the answer is true).
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { fields, type FieldMeta } from '@/generated/fields';
import { Icon } from '@/components/icon';
import { FieldValue } from '../cells/cell-registry';
import { operationOf } from './operation-inputs';
import { optionalText } from '@/i18n/optional-text';

export interface ActionResultProps {
  resource: string;
  /** The action's name in the schema. */
  name: string;
  /** The operation that answered. */
  operation: string;
  answer: unknown;
  /** The answer's boolean field that must be true for the hint to show (`resultHintWhen`). */
  hintWhen?: string | undefined;
  onClose: () => void;
}

/** The answer's fields and the Close button (inside an action's dialog). */
export function ActionResult({
  resource,
  name,
  operation,
  answer,
  hintWhen,
  onClose,
}: ActionResultProps) {
  const { t } = useTranslation();
  const type = operationOf(resource, operation).response ?? '';
  const list = ((fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? []).filter(
    (meta) => !meta.hidden,
  );
  const record = (answer && typeof answer === 'object' ? answer : {}) as Readonly<
    Record<string, unknown>
  >;
  const hint =
    hintWhen === undefined || record[hintWhen] === true
      ? optionalText(t, `resources:${resource}.resultHints.${name}`)
      : null;
  return (
    <Stack gap="md" data-testid="action-result" data-action={name}>
      {hint && (
        <Alert color="yellow" icon={<Icon name="alert-triangle" size={18} />}>
          {hint}
        </Alert>
      )}
      {list.map((meta) => (
        <Stack key={meta.path} gap={4} data-field={meta.path}>
          <Text size="sm" fw={500}>
            {t(`resources:${resource}.fields.${meta.path}`)}
          </Text>
          <FieldValue resource={resource} meta={meta} record={record} />
        </Stack>
      ))}
      <Group justify="flex-end">
        <Button onClick={onClose} data-testid="action-result-close">
          {t('common:actions.close')}
        </Button>
      </Group>
    </Stack>
  );
}

/** The answer in a dialog of its own (an action that asks no form). */
export function ActionResultModal(props: ActionResultProps & { title: string }) {
  const { title, ...rest } = props;
  return (
    <Modal opened onClose={props.onClose} title={title} centered closeOnClickOutside={false}>
      <ActionResult {...rest} />
    </Modal>
  );
}
