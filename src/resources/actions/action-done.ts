/**
 * The notice of an action that succeeded: what it did to the record, by name. An operation's own
 * text (`resources:<resource>.done.<operation>`, else `common:done.<operation>`: "moved to the
 * recycle bin", "restored") comes first, else the generic "<action> “<name>”: done". A record
 * without a name is not named by its id.
 */
import type { TFunction } from 'i18next';
import { optionalText } from '@/i18n/optional-text';

/** The keys of an operation's own success text, most specific first. */
export function doneKeys(resource: string, operation: string): string[] {
  return [`resources:${resource}.done.${operation}`, `common:done.${operation}`];
}

export function actionDoneMessage(
  t: TFunction,
  resource: string,
  operation: string,
  action: string,
  name: string,
): string {
  return t(
    [...doneKeys(resource, operation), name ? 'common:actions.done' : 'common:actions.doneUnnamed'],
    {
      action,
      name,
    },
  );
}

/** The operation's own success text, or null when it has none (a start says nothing). */
export function ownDoneMessage(
  t: TFunction,
  resource: string,
  operation: string,
  name: string,
): string | null {
  return optionalText(t, doneKeys(resource, operation), { name }) || null;
}
