import { describe, expect, it } from 'vitest';
import { stateActions } from '../src/generated/actions.ts';
import {
  actionOf,
  callIsAction,
  matchesWhen,
  offeredActions,
  ruleAllows,
  ruleStates,
  stateOf,
} from './state-actions.ts';

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

describe('offers that read the record', () => {
  it('match dotted paths, any value of a list, and a missing field as null', () => {
    const record = { api_key: { exists: true }, email_verified: null, email: 'a@b.c' };
    expect(matchesWhen(record, { 'api_key.exists': true })).toBe(true);
    expect(matchesWhen(record, { 'api_key.exists': false })).toBe(false);
    expect(matchesWhen(record, { 'migration.export': true })).toBe(false);
    expect(matchesWhen(record, { email_verified: [false, null, 0] })).toBe(true);
    expect(matchesWhen({}, { email_verified: [false, null, 0] })).toBe(true);
    expect(matchesWhen(record, { email: [null, ''] })).toBe(false);
    expect(matchesWhen({ email: '' }, { email: [null, ''] })).toBe(true);
  });

  it('offers the profile actions its record allows (one state, conditions in offer)', () => {
    const base = {
      id: 'u1',
      email: 'ada@example.org',
      email_verified: 1_700_000_000,
      api_key: { exists: false, expires: 0 },
      migration: { export: false, import: false },
      show_change_email_button: false,
    };
    const offered = offeredActions('profile', base);
    expect(offered.slice(0, stateActions.profile.table.profile.length)).toEqual(
      stateActions.profile.table.profile,
    );
    for (const name of ['changeEmail', 'sendVerification', 'revokeApiKey', 'exportMigration'])
      expect(offered, name).not.toContain(name);
    const more = offeredActions('profile', {
      ...base,
      email_verified: false,
      api_key: { exists: true, expires: 1 },
      migration: { export: true, import: true },
      show_change_email_button: true,
    });
    for (const name of [
      'changeEmail',
      'sendVerification',
      'revokeApiKey',
      'exportMigration',
      'importMigration',
    ])
      expect(more, name).toContain(name);
    // Nothing to verify without an address.
    expect(
      offeredActions('profile', { ...base, email: null, email_verified: false }),
    ).not.toContain('sendVerification');
    // New recovery codes only for a user with a second factor: none for an account without
    // second factors (a provider's), none without a factor, and a passkey alone is one.
    const factors = (second_factor: unknown) =>
      offeredActions('profile', { ...base, second_factor });
    const state = { totp: false, passkeys: 0, required: false, recovery_codes_left: 0 };
    expect(factors(null)).not.toContain('regenerateRecoveryCodes');
    expect(factors(state)).not.toContain('regenerateRecoveryCodes');
    expect(factors({ ...state, passkeys: 1 })).toContain('regenerateRecoveryCodes');
    expect(factors({ ...state, totp: true })).toContain('regenerateRecoveryCodes');
  });

  it('tells a call that is an action from other calls of its operation', () => {
    expect(
      callIsAction('desktops', 'start', 'desktops.action', { id: 'd1', action: 'start' }),
    ).toBe(true);
    expect(callIsAction('desktops', 'start', 'desktops.action', { id: 'd1', action: 'stop' })).toBe(
      false,
    );
    expect(callIsAction('desktops', 'start', 'desktops.update', { id: 'd1' })).toBe(false);
  });
});
