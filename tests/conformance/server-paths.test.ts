/** Screens never show a path on the server: the role-visibility config's file is not a field. */
import { expect, it } from 'vitest';
import { fields, type FieldMeta } from '@/generated/fields';

it('hides the file of the role-visibility config from its page', () => {
  const file = (fields.RoleVisibility as readonly FieldMeta[]).find((m) => m.path === 'file');
  expect(file?.hidden).toBe(true);
});
