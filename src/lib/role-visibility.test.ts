import { afterEach, describe, expect, it } from 'vitest';
import { operations } from '@/generated/api';
import type { RoleVisibilityEffective } from '@/generated/types';
import {
  actionHidden,
  fieldHidden,
  getRoleVisibility,
  hiddenFields,
  inRoleSet,
  operationAllowed,
  roleVisibilityRevision,
  setRoleVisibility,
} from './role-visibility';

const forUser: RoleVisibilityEffective = {
  role: 'user',
  sets: { desktops: ['view', 'write'], deployments: ['view', 'manage'] },
  hiddenFields: { desktops: ['description', 'hardware'] },
  hiddenActions: { desktops: ['delete'] },
  version: 3,
};

afterEach(() => setRoleVisibility(null));

describe('role visibility store', () => {
  it('leaves the generated tables in charge until the server answered', () => {
    expect(getRoleVisibility()).toBeNull();
    expect(inRoleSet('user', 'deployments', 'view', ['admin', 'manager', 'advanced'])).toBe(false);
    expect(operationAllowed(operations['desktops.list'], 'user')).toBe(true);
    expect(fieldHidden('desktops', 'description', 'user')).toBe(false);
    expect(actionHidden('desktops', 'delete', 'user')).toBe(false);
  });

  it("overrides the role sets, fields and actions for the answer's role only", () => {
    const before = roleVisibilityRevision();
    setRoleVisibility(forUser);
    expect(roleVisibilityRevision()).toBeGreaterThan(before);
    // The user is in deployments' view set now, and out of desktops' read set.
    expect(inRoleSet('user', 'deployments', 'view', ['admin', 'manager', 'advanced'])).toBe(true);
    expect(operationAllowed(operations['desktops.list'], 'user')).toBe(false);
    expect(operationAllowed(operations['desktops.update'], 'user')).toBe(true);
    // token and public operations stay open.
    expect(operationAllowed(operations['config.show'], 'user')).toBe(true);
    expect(operationAllowed(operations['desktops.cardImage'], null)).toBe(true);
    expect(fieldHidden('desktops', 'description', 'user')).toBe(true);
    expect(fieldHidden('desktops', 'hardware.memory', 'user')).toBe(true);
    expect(fieldHidden('desktops', 'name', 'user')).toBe(false);
    expect(actionHidden('desktops', 'delete', 'user')).toBe(true);
    expect(actionHidden('desktops', 'start', 'user')).toBe(false);
    // Another role keeps the generated tables.
    expect(operationAllowed(operations['desktops.list'], 'admin')).toBe(true);
    expect(fieldHidden('desktops', 'description', 'admin')).toBe(false);
    expect(inRoleSet('advanced', 'deployments', 'view', ['admin', 'manager', 'advanced'])).toBe(
      true,
    );
  });

  it('answers the same hidden list until the visibility changes (stable for memos)', () => {
    setRoleVisibility(forUser);
    expect(hiddenFields('desktops', 'user')).toBe(hiddenFields('desktops', 'user'));
    expect(hiddenFields('templates', 'user')).toBe(hiddenFields('media', 'user'));
    setRoleVisibility(null);
    expect(hiddenFields('desktops', 'user')).toEqual([]);
  });
});
