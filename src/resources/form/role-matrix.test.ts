import { describe, expect, it } from 'vitest';
import type { RoleVisibilityCatalogueResource } from '@/generated/types';
import { changedCount, entryRoles, matchesSearch, toggleRole } from './role-matrix';

const desktops: RoleVisibilityCatalogueResource = {
  name: 'desktops',
  sets: { read: ['admin', 'manager', 'advanced', 'user'], view: ['admin', 'manager'] },
  fields: ['name', 'description'],
  actions: ['start', 'delete'],
};

describe('role matrix edits', () => {
  it('starts from the defaults: a set its generated roles, a field or action every role', () => {
    expect(entryRoles({}, desktops, 'roles', 'view')).toEqual(['admin', 'manager']);
    expect(entryRoles({}, desktops, 'fields', 'description')).toEqual([
      'admin',
      'manager',
      'advanced',
      'user',
    ]);
  });

  it('writes only what differs from the default, and drops an entry set back to it', () => {
    const hidden = toggleRole({}, desktops, 'fields', 'description', 'user', false);
    expect(hidden).toEqual({
      fields: { desktops: { description: ['admin', 'manager', 'advanced'] } },
    });
    expect(changedCount(hidden, 'desktops')).toBe(1);
    const back = toggleRole(hidden, desktops, 'fields', 'description', 'user', true);
    expect(back).toEqual({});
    const granted = toggleRole({}, desktops, 'roles', 'view', 'user', true);
    expect(granted.roles?.desktops?.view).toEqual(['admin', 'manager', 'user']);
  });

  it('never changes the config it was given', () => {
    const config = { roles: { desktops: { view: ['admin' as const] } } };
    const next = toggleRole(config, desktops, 'roles', 'view', 'user', true);
    expect(config.roles.desktops.view).toEqual(['admin']);
    expect(next.roles?.desktops?.view).toEqual(['admin', 'user']);
  });

  it('finds a resource by its name, label, fields and actions', () => {
    expect(matchesSearch(desktops, 'Desktops', '')).toBe(true);
    expect(matchesSearch(desktops, 'Desktops', 'DESC')).toBe(true);
    expect(matchesSearch(desktops, 'Desktops', 'delete')).toBe(true);
    expect(matchesSearch(desktops, 'Desktops', 'quota')).toBe(false);
  });
});
