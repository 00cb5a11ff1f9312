import { describe, expect, it } from 'vitest';
import { stateActions } from '../src/generated/actions.ts';
import { actionOf, offeredActions, ruleAllows, ruleStates, stateOf } from './state-actions.ts';

const machine = stateActions.desktops;
/** Actions the desktops' schema offers outside the state table (rule- or always-offered). */
const offeredByRule = Object.entries(machine.actions)
  .filter(([, action]) => 'offer' in action)
  .map(([name]) => name);

describe('desktop state machine', () => {
  it.each(Object.entries(machine.table))('offers the table row of state %s first', (state, row) => {
    const offered = offeredActions('desktops', { state, type: 'persistent' });
    expect(offered.slice(0, row.length)).toEqual(row);
    for (const name of offered.slice(row.length)) expect(offeredByRule).toContain(name);
  });

  it('offers edit and delete only when the rule allows the state, and only for persistent desktops', () => {
    expect(offeredActions('desktops', { state: 'stopped', type: 'persistent' })).toEqual(
      expect.arrayContaining(['start', 'open', 'edit', 'delete']),
    );
    expect(offeredActions('desktops', { state: 'started', type: 'persistent' })).not.toContain(
      'edit',
    );
    expect(offeredActions('desktops', { state: 'stopped', type: 'nonpersistent' })).not.toContain(
      'delete',
    );
    expect(offeredActions('desktops', { state: 'started', type: 'persistent' })).toContain('open');
  });

  it('replaces the row with the override: a started temporary desktop offers delete, not stop', () => {
    for (const override of machine.overrides)
      for (const state of override.states) {
        const offered = offeredActions('desktops', { state, ...override.when });
        expect(offered.slice(0, override.actions.length)).toEqual(override.actions);
        expect(offered).not.toContain('stop');
      }
  });

  it('treats unknown states as the fallback', () => {
    expect(stateOf('desktops', { state: 'weird' })).toBe(machine.fallback);
    expect(ruleAllows('desktops', 'edit', { state: 'weird' })).toBe(false);
  });

  it('gives the named rule states and the action definitions', () => {
    expect(ruleStates('desktops', 'viewer')).toEqual(machine.rules.viewer.states);
    expect(() => ruleStates('desktops', 'nope')).toThrow(/no rule nope/);
    expect(actionOf('desktops', 'forceStop')?.param).toEqual({ action: 'stop' });
    expect(actionOf('desktops', 'delete')?.permanent).toBe('deletePermanent');
  });
});

describe('value maps', () => {
  it('maps raw values through valueMap (a template enabled=true is in state enabled)', () => {
    expect(stateOf('templates', { enabled: true })).toBe('enabled');
    expect(stateOf('templates', { enabled: false })).toBe('disabled');
  });
});
