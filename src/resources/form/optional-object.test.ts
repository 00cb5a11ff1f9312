import { describe, expect, it } from 'vitest';
import { AdminGroupUpdate } from '@/generated/validators';
import { fieldsOf } from './field-meta';
import { dropUnsetMembers } from './resolver';
import { isOptionalObject } from './schema-form';

const fields = fieldsOf('AdminGroupUpdate');

describe('an optional object field (anyOf [object, null])', () => {
  it('is one switch row followed by its own fields in its section', () => {
    const quota = fields.find((meta) => meta.path === 'quota');
    expect(quota && isOptionalObject(quota)).toBe(true);
    expect(quota).toMatchObject({ section: 'quota', nullable: true, widget: 'nullableObject' });
    const members = fields.filter((meta) => meta.path.startsWith('quota.'));
    expect(members.map((meta) => meta.path)).toContain('quota.desktops');
    expect(members.every((meta) => meta.section === 'quota' && !meta.hidden)).toBe(true);
  });

  it('drops the members the form registered as null, and keeps null for the object itself', () => {
    const registered = { quota: { desktops: 4, memory: null, running: null } };
    const values = dropUnsetMembers(structuredClone(registered), fields);
    expect(values).toEqual({ quota: { desktops: 4 } });
    expect(AdminGroupUpdate(values)).toBe(true);
    expect(AdminGroupUpdate(registered)).toBe(false);
    expect(dropUnsetMembers({ quota: null }, fields)).toEqual({ quota: null });
    // Nullable fields keep their null (a registration code cleared on purpose).
    expect(dropUnsetMembers({ enrollment: { user: null } }, fields)).toEqual({
      enrollment: { user: null },
    });
  });
});
