/** A record's title, and calling an action's operation for it. */
import { resourceOf } from '@/generated/resources';
import { requestOperation } from '@/providers/http-client';
import type { ActionDefinition } from '@common/state-actions';
import { operationInputs } from './operation-inputs';

type Record = Readonly<globalThis.Record<string, unknown>>;

/** The field that names a record (x-ui.list.title, else `name`, else `username`), or its id. */
export function recordTitle(resource: string, record: Record): string {
  const field = resourceOf(resource)?.meta.list?.title ?? 'name';
  for (const key of [field, 'name', 'username']) {
    const value = record[key];
    if (typeof value === 'string' && value) return value;
  }
  return String(record.id ?? '');
}

/**
 * Calls an action's operation (or its permanent variant) for a record: the path parameters and
 * body from the record (`fill`), the action's fixed `param` and `body`. Resolves with the answer.
 */
export async function runOperation(
  resource: string,
  record: Record,
  operation: string,
  def: ActionDefinition = {},
): Promise<unknown> {
  const { params, body } = operationInputs(resource, operation, def, record);
  return requestOperation(`${resource}.${operation}`, { params, ...(body ? { body } : {}) });
}
