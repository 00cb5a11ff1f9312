/**
 * Action handlers: components that take over an action instead of the default (call the action's
 * operation, or open its route). `x-actions.actions.<name>.handler` names one; features register
 * theirs at start-up (the desktops' Open menu). An unknown name throws, naming the action.
 */
import type { ComponentType } from 'react';
import type { ActionDefinition } from '@common/state-actions';

export interface ActionHandlerProps {
  resource: string;
  record: Readonly<Record<string, unknown>>;
  /** The action's name in the schema. */
  name: string;
  def: ActionDefinition;
  /** Where it is drawn: a button in a card or row, or an item of the "more" menu. */
  variant: 'button' | 'menuItem';
}

export type ActionHandler = ComponentType<ActionHandlerProps>;

const handlers = new Map<string, ActionHandler>();

export function registerActionHandler(name: string, handler: ActionHandler): void {
  handlers.set(name, handler);
}

export function hasActionHandler(name: string): boolean {
  return handlers.has(name);
}

/**
 * The handler of an action.
 * @throws Error naming the action when no handler has that name
 */
export function resolveActionHandler(
  resource: string,
  action: string,
  name: string,
): ActionHandler {
  const handler = handlers.get(name);
  if (!handler) throw new Error(`No action handler "${name}" registered for ${resource}.${action}`);
  return handler;
}
