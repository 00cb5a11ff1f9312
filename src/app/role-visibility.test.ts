/**
 * The admin's role visibility reaches the screens through one store: the navbar, the actions a
 * record offers and the list columns follow it for the signed-in role.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RoleVisibilityEffective } from '@/generated/types';
import { setRoleVisibility } from '@/lib/role-visibility';
import { availableActions } from '@/resources/actions/available-actions';
import { cardFields, tableColumns } from '@/resources/list/list-columns';
import { buildNavEntries, type NavEntry } from './layout/nav-items';

const keys = (entries: readonly NavEntry[]): string[] =>
  entries.flatMap((e) => (e.kind === 'group' ? [e.key, ...keys(e.children)] : [e.key]));

const userSets = {
  desktops: ['read', 'write', 'view'],
  deployments: ['view', 'manage'],
};

const visibility = (patch: Partial<RoleVisibilityEffective>): RoleVisibilityEffective => ({
  role: 'user',
  sets: userSets,
  hiddenFields: {},
  hiddenActions: {},
  version: 1,
  ...patch,
});

afterEach(() => setRoleVisibility(null));

describe('role visibility on the screens', () => {
  it('shows and hides the deployments menu entry of a user as the admin decides', () => {
    expect(keys(buildNavEntries('user', null))).not.toContain('deployments');
    setRoleVisibility(visibility({}));
    expect(keys(buildNavEntries('user', null))).toContain('deployments');
    setRoleVisibility(visibility({ sets: { ...userSets, deployments: [] } }));
    expect(keys(buildNavEntries('user', null))).not.toContain('deployments');
    // The desktops stay.
    expect(keys(buildNavEntries('user', null))).toContain('desktops');
  });

  it("drops a hidden field from the user's columns and cards, not from an admin's", () => {
    expect(tableColumns('desktops', 'user').map((m) => m.path)).toContain('description');
    expect(cardFields('desktops', 'user').map((m) => m.path)).toContain('description');
    setRoleVisibility(visibility({ hiddenFields: { desktops: ['description'] } }));
    expect(tableColumns('desktops', 'user').map((m) => m.path)).not.toContain('description');
    expect(cardFields('desktops', 'user').map((m) => m.path)).not.toContain('description');
    expect(tableColumns('desktops', 'admin').map((m) => m.path)).toContain('description');
    setRoleVisibility(null);
    expect(tableColumns('desktops', 'user').map((m) => m.path)).toContain('description');
  });

  it('withholds a hidden action, and every action whose operation the role lost', () => {
    const record = { id: 'd1', state: 'stopped', name: 'One' };
    const names = () => availableActions('desktops', record, 'user').map((a) => a.name);
    expect(names()).toContain('start');
    expect(names()).toContain('open');
    setRoleVisibility(visibility({ hiddenActions: { desktops: ['start'] } }));
    expect(names()).not.toContain('start');
    expect(names()).toContain('open');
    setRoleVisibility(visibility({ sets: { ...userSets, desktops: ['read', 'view'] } }));
    expect(names()).not.toContain('start');
  });
});
