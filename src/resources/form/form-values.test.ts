import { describe, expect, it } from 'vitest';
import { changedSections } from './form-values';

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
