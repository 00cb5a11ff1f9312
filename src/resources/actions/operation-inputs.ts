/**
 * What an action sends to its operation: the path parameters and the body, from the record (the
 * action's `fill`, by default the record's id as `id`), the action's fixed `param` and `body`, and
 * the values of its form when it asks one. Body fields are only those the request type has, so a
 * path parameter does not leak into a body that refuses unknown fields.
 */
import { operations, type Operation } from '@/generated/api';
import { fields, type FieldMeta } from '@/generated/fields';
import { resourceOf } from '@/generated/resources';
import type { ActionDefinition } from '@common/state-actions';

type Values = Readonly<Record<string, unknown>>;

export interface OperationInputs {
  params: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

/** The operation of `<resource>.<name>`. @throws Error when it does not exist */
export function operationOf(resource: string, name: string): Operation {
  const op = (operations as Readonly<Record<string, Operation>>)[`${resource}.${name}`];
  if (!op) throw new Error(`No operation ${resource}.${name}`);
  return op;
}

/** The top-level body fields of a request type. */
export function requestFields(op: Operation): ReadonlySet<string> {
  if (!op.request) return new Set();
  const list = (fields as Readonly<Record<string, readonly FieldMeta[]>>)[op.request] ?? [];
  return new Set(list.map((meta) => meta.path.split('.')[0] ?? meta.path));
}

/** The inputs the action takes from the record (`fill`, default the id as `id`). */
export function filledInputs(
  resource: string,
  def: ActionDefinition,
  record: Values,
): Record<string, unknown> {
  const idField = resourceOf(resource)?.meta.idField ?? 'id';
  const fill = def.fill ?? { id: idField };
  return Object.fromEntries(Object.entries(fill).map(([key, field]) => [key, record[field]]));
}

export function operationInputs(
  resource: string,
  operation: string,
  def: ActionDefinition,
  record: Values,
  values: Values = {},
): OperationInputs {
  const op = operationOf(resource, operation);
  const idField = resourceOf(resource)?.meta.idField ?? 'id';
  const inputs: Record<string, unknown> = {
    ...def.param,
    ...def.body,
    ...filledInputs(resource, def, record),
    ...values,
  };
  const params: Record<string, string> = {};
  for (const match of op.path.matchAll(/\{([^}]+)\}/g)) {
    const name = match[1] ?? '';
    const value = inputs[name] ?? (name === 'id' ? record[idField] : undefined);
    if (value !== undefined && value !== null) params[name] = String(value);
  }
  if (op.body === 'none' || !op.request) return { params, body: undefined };
  const known = requestFields(op);
  const body = Object.fromEntries(
    Object.entries(inputs).filter(([key, value]) => known.has(key) && value !== undefined),
  );
  return { params, body };
}
