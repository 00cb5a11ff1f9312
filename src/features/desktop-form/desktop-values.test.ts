import { describe, expect, it } from 'vitest';
import type { DesktopInfo } from '@/generated/types';
import { DesktopCreate } from '@/generated/validators';
import { changedSections } from '@/resources/form/form-values';
import { ruleAllows } from '@common/state-actions';
import { NEW_DESKTOP_DEFAULTS, valuesFromInfo } from './desktop-values';
import { desktopFormExtension } from './desktop-form-extension';
import { hardwareLimits, limitOverrides } from './hardware-limits';

const info: DesktopInfo = {
  id: 'd1',
  kind: 'desktop',
  name: 'Demo desktop 1',
  description: null,
  image: { id: '_default', type: 'stock', url: '' },
  guest_properties: {
    fullscreen: false,
    credentials: { username: 'isard', password: 'pirineus' },
    viewers: { browser_vnc: { options: null } },
  },
  hardware: {
    vcpus: 1,
    memory: 1,
    disk_size: 1,
    boot_order: ['disk'],
    disk_bus: 'default',
    videos: ['default'],
    graphics: ['default'],
    interfaces: ['default'],
    isos: [{ id: 'iso1', name: 'ISO' }],
    floppies: [],
    reservables: { vgpus: null },
  },
  server: false,
  state: 'stopped',
  limited_hardware: null,
};

describe('desktop form values', () => {
  it('uses the spec defaults for a new desktop', () => {
    expect(NEW_DESKTOP_DEFAULTS.hardware).toMatchObject({
      vcpus: 1,
      memory: 1,
      disk_size: 1,
      boot_order: ['disk'],
    });
    expect(Object.keys(NEW_DESKTOP_DEFAULTS.guest_properties?.viewers ?? {})).toEqual([
      'browser_vnc',
      'file_spice',
    ]);
  });

  it('builds valid create values from a template info answer', () => {
    const values = { ...valuesFromInfo(info), template_id: 'demo-template' };
    expect(values.hardware).not.toHaveProperty('graphics');
    expect(values.hardware?.isos).toEqual([{ id: 'iso1' }]);
    expect(DesktopCreate(values)).toBe(true);
  });

  it('sends only the changed sections on edit', () => {
    const initial = valuesFromInfo(info);
    const current = { ...initial, hardware: { ...initial.hardware, memory: 2 } };
    expect(changedSections(initial, current)).toEqual({ hardware: current.hardware });
    expect(changedSections(initial, initial)).toEqual({});
  });

  it('refuses to edit a started desktop (state rule) or a server (form extension)', () => {
    expect(ruleAllows('desktops', 'edit', { state: 'stopped' })).toBe(true);
    expect(ruleAllows('desktops', 'edit', { state: 'failed' })).toBe(true);
    expect(ruleAllows('desktops', 'edit', { state: 'started' })).toBe(false);
    expect(desktopFormExtension.editBlocker?.({ state: 'stopped', server: false })).toBeNull();
    expect(desktopFormExtension.editBlocker?.({ state: 'stopped', server: true })).toBe(
      'common:desktopForm.serverNotEditable',
    );
  });

  it('takes the update form fields from the info answer, nothing the form does not have', () => {
    const withExtra = { ...info, asset_tag: 'A-1' } as DesktopInfo;
    expect(valuesFromInfo(withExtra)).not.toHaveProperty('asset_tag');
    expect(valuesFromInfo(info)).toMatchObject({
      name: info.name,
      image: { type: 'stock', id: '_default' },
    });
  });

  it('caps hardware at the quota, else the default quota', () => {
    expect(hardwareLimits({ quota: false })).toEqual({
      memory: 128,
      vcpus: 128,
      desktops_disk_size: 500,
    });
    const overrides = limitOverrides(
      hardwareLimits({ quota: { memory: 4, vcpus: 2, desktops_disk_size: 20 } }),
      'DesktopCreate',
    );
    expect(overrides['hardware.memory']?.maximum).toBe(4);
    expect(overrides['hardware.disk_size']?.maximum).toBe(20);
  });
});
