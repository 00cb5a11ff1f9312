import { Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { FieldValue } from '../cells/cell-registry';
import { fieldLabelKey } from './field-meta';
import { fieldsOfType } from './form-body';

/** The operation's answer: each visible field of its type under its label, through its renderer. */
export function AnswerView({
  resource,
  type,
  value,
}: {
  resource: string;
  type: string;
  value: unknown;
}) {
  const { t } = useTranslation();
  const record = (value ?? {}) as Readonly<Record<string, unknown>>;
  return (
    <Stack gap="sm" data-testid="form-answer">
      {fieldsOfType(type)
        .filter((meta) => !meta.hidden)
        .map((meta) => (
          <Stack key={meta.path} gap={4}>
            <Text size="sm" fw={500}>
              {t(fieldLabelKey(resource, meta.path))}
            </Text>
            <FieldValue resource={resource} meta={meta} record={record} />
          </Stack>
        ))}
    </Stack>
  );
}
