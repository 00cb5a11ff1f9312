import { describe, expect, it } from 'vitest';
import { stateActions } from '@/generated/actions';
import { actionParams, actionsFor, normalisedState } from './state-actions';

const machine = stateActions.desktops;

describe('state actions', () => {
  it.each(Object.entries(machine.table))(
    'shows the generated actions for a persistent desktop in state %s',
    (state, expected) => {
      expect(actionsFor('desktops', { state, type: 'persistent' }).map((a) => a.name)).toEqual(
        expected,
      );
    },
  );

  it('applies the nonpersistent override (delete instead of stop)', () => {
    for (const override of machine.overrides) {
      for (const state of override.states) {
        expect(actionsFor('desktops', { state, ...override.when }).map((a) => a.name)).toEqual(
          override.actions,
        );
      }
    }
  });

  it('treats unknown states as the fallback', () => {
    expect(normalisedState('desktops', { state: 'weird' })).toBe(machine.fallback);
    expect(
      actionsFor('desktops', { state: 'weird', type: 'persistent' }).map((a) => a.name),
    ).toEqual(machine.table[machine.fallback as keyof typeof machine.table] ?? []);
  });

  it('names the generated operation of each action', () => {
    const start = actionsFor('desktops', { state: 'stopped', type: 'persistent' })[0];
    expect(start?.operation).toBe(machine.actions.start.operation);
    expect(actionParams('desktops', 'start')).toEqual({ action: 'start' });
    expect(actionParams('desktops', 'forceStop')).toEqual({ action: 'stop' });
    expect(actionParams('desktops', 'create')).toEqual({ action: 'start' });
  });
});
