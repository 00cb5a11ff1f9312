/**
 * Action effects: what an action does after its operation succeeded, beyond refetching the record
 * and opening its `then` route (`x-actions.actions.<name>.effect`, e.g. switching the interface
 * language once the server saved it). Features register theirs at start-up; an unknown name
 * throws, naming the action.
 */
export interface ActionEffectContext {
  resource: string;
  /** The action's name in the schema. */
  action: string;
  record: Readonly<Record<string, unknown>>;
  /** What the dialog sent: the form's values (path parameters and body fields). */
  values: Readonly<Record<string, unknown>>;
  /** The operation's answer. */
  answer: unknown;
}

export type ActionEffect = (context: ActionEffectContext) => void | Promise<void>;

const effects = new Map<string, ActionEffect>();

export function registerActionEffect(name: string, effect: ActionEffect): void {
  effects.set(name, effect);
}

export function hasActionEffect(name: string): boolean {
  return effects.has(name);
}

/**
 * The effect an action names.
 * @throws Error naming the action when no effect has that name
 */
export function resolveActionEffect(resource: string, action: string, name: string): ActionEffect {
  const effect = effects.get(name);
  if (!effect) throw new Error(`No action effect "${name}" registered for ${resource}.${action}`);
  return effect;
}
