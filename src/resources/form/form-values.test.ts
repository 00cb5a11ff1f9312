import { describe, expect, it } from 'vitest';
import { fields } from '@/generated/fields';
import { changedSections, pickFormValues } from './form-values';

describe('changedSections', () => {
  it('sends only the sections that differ', () => {
    const initial = { name: 'A', hardware: { memory: 1, isos: [{ id: 'x' }] } };
    expect(
      changedSections(initial, { ...initial, hardware: { memory: 2, isos: [{ id: 'x' }] } }),
    ).toEqual({
      hardware: { memory: 2, isos: [{ id: 'x' }] },
    });
    expect(changedSections(initial, initial)).toEqual({});
  });

  it('treats an untouched empty group as unchanged, and emptying a list as a change', () => {
    const initial: Record<string, Record<string, unknown>> = {
      guest_properties: { viewers: { browser_vnc: {} } },
      hardware: { isos: [{ id: 'x' }] },
    };
    expect(
      changedSections(initial, {
        ...initial,
        guest_properties: { ...initial.guest_properties, credentials: {} },
      }),
    ).toEqual({});
    expect(changedSections(initial, { ...initial, hardware: { isos: [] } })).toEqual({
      hardware: { isos: [] },
    });
  });
});

describe('pickFormValues', () => {
  it('leaves out a null the form field cannot hold (a deployment without a description)', () => {
    const detail = { id: 'd1', name: 'Lab', description: null, desktop_name: 'Lab desktop' };
    expect(pickFormValues(fields.DeploymentUpdate, detail)).toEqual({
      name: 'Lab',
      desktop_name: 'Lab desktop',
    });
  });
});
