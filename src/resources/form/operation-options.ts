/**
 * Choices a field names by operation (`x-ui.options: "desktops.list"`): the operation's list
 * answer as options (`id` as the value, `name` as the label). Only built GET operations without
 * path parameters the role may call are asked (a public one without a session too: the categories
 * of the sign-up page); a form extension's options for the same field win over these.
 */
import { useQueries } from '@tanstack/react-query';
import { useMemo } from 'react';
import { operations, type Operation } from '@/generated/api';
import type { FieldMeta } from '@/generated/fields';
import type { Role } from '@/generated/types';
import { requestOperation } from '@/providers/http-client';
import { usableOperation } from '../actions/available-actions';
import type { FieldOption } from './types';

/**
 * The list answer of an options operation as choices; items without an id are skipped, and with
 * `when` (`x-ui.optionsWhen`) only the items whose fields hold one of the listed values are kept.
 */
export function optionsFromAnswer(
  answer: unknown,
  when: Readonly<Record<string, readonly unknown[]>> = {},
): FieldOption[] {
  if (!Array.isArray(answer)) return [];
  return answer.flatMap((item: unknown) => {
    if (typeof item === 'string') return [{ value: item, label: item }];
    if (!item || typeof item !== 'object') return [];
    const record = item as Record<string, unknown>;
    if (!Object.entries(when).every(([field, values]) => values.includes(record[field]))) return [];
    const { id, name, description } = record;
    if (typeof id !== 'string' && typeof id !== 'number') return [];
    return [
      {
        value: String(id),
        label: typeof name === 'string' && name ? name : String(id),
        ...(typeof description === 'string' ? { description } : {}),
      },
    ];
  });
}

/** The operation key of a field's options, when it names a usable operation. */
function optionsOperation(meta: FieldMeta, role: Role | null): string | null {
  const key = meta.options;
  if (!key?.includes('.')) return null;
  const [resource = '', name = ''] = key.split('.');
  const declared = (operations as Readonly<Record<string, Operation>>)[key];
  const op =
    declared && !declared.planned && declared.access === 'public'
      ? declared
      : usableOperation(resource, name, role);
  // Only a plain list read: a search (allowed.term) belongs to its widget.
  return op && op.method === 'GET' && !op.path.includes('{') ? key : null;
}

/** Stable (module-level), so the combined answers keep their identity between renders. */
const answersData = (answers: readonly { data: unknown }[]): unknown[] =>
  answers.map((answer) => answer.data);

export function useOperationOptions(
  list: readonly FieldMeta[],
  role: Role | null,
): Readonly<Record<string, readonly FieldOption[]>> {
  const wanted = useMemo(
    () =>
      list.flatMap((meta) => {
        const key = optionsOperation(meta, role);
        return key && !meta.hidden ? [{ path: meta.path, key, when: meta.optionsWhen }] : [];
      }),
    [list, role],
  );
  const data = useQueries({
    queries: wanted.map(({ key }) => ({
      queryKey: [key, 'options'],
      queryFn: () => requestOperation(key),
      staleTime: 30_000,
    })),
    combine: answersData,
  });
  return useMemo(
    () =>
      Object.fromEntries(
        wanted.map(({ path, when }, index) => [path, optionsFromAnswer(data[index], when)]),
      ),
    [wanted, data],
  );
}
