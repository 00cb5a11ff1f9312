/**
 * The names of the ids a form starts with (`x-actions.actions.<name>.names`): a read of the
 * record answers them as `{ id, name }` objects (a deployment's users and groups, its co-owners),
 * and a picker that holds one of those ids shows it by that entry instead of the bare id.
 */
import { createContext, useContext } from 'react';

/** One named entry of the read's answer, with whatever else it says about itself. */
export type NamedValue = Readonly<Record<string, unknown>> & { id: string; name: string };

const NamedValuesContext = createContext<ReadonlyMap<string, NamedValue>>(new Map());

export const NamedValuesProvider = NamedValuesContext.Provider;

/** The named entries of the form that draws this widget, by id (empty outside such a form). */
export function useNamedValues(): ReadonlyMap<string, NamedValue> {
  return useContext(NamedValuesContext);
}

/** Every object with a string id and a non-empty string name in the answer, at any depth. */
export function namedValuesOf(answer: unknown): Map<string, NamedValue> {
  const found = new Map<string, NamedValue>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const record = node as Readonly<Record<string, unknown>>;
    const { id, name } = record;
    if (typeof id === 'string' && typeof name === 'string' && name !== '')
      found.set(id, { ...record, id, name });
    Object.values(record).forEach(visit);
  };
  visit(answer);
  return found;
}
