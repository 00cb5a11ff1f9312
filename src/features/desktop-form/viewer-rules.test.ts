import { describe, expect, it } from 'vitest';
import { schemas } from '@/generated/schemas';
import {
  interfacesForViewer,
  NEEDS_WIREGUARD,
  NEW_DESKTOP_VIEWERS,
  ORDERED_VIEWERS,
  toggleViewer,
  viewersForInterfaces,
  viewersMap,
} from './viewer-rules';

const viewerDefaults = (
  schemas as readonly { title?: string; $defs?: Record<string, { default?: unknown }> }[]
).find((schema) => schema.title === 'ViewerDefaults');

describe('viewer rules', () => {
  it('matches the schema defaults of needsWireguard and newDesktopDefault', () => {
    expect(NEEDS_WIREGUARD).toEqual(viewerDefaults?.$defs?.needsWireguard?.default);
    expect(NEW_DESKTOP_VIEWERS).toEqual(viewerDefaults?.$defs?.newDesktopDefault?.default);
  });

  it('lists the viewers in the default order vnc, spice, rdp, rdpgw, rdpvpn', () => {
    expect(ORDERED_VIEWERS).toEqual([
      'browser-vnc',
      'file-spice',
      'browser-rdp',
      'file-rdpgw',
      'file-rdpvpn',
    ]);
  });

  it('adds wireguard when an RDP viewer is chosen and the network is allowed', () => {
    expect(interfacesForViewer(['default'], 'browser-rdp', ['default', 'wireguard'])).toEqual([
      'default',
      'wireguard',
    ]);
    expect(interfacesForViewer(['default'], 'browser-rdp', ['default'])).toEqual(['default']);
    expect(interfacesForViewer(['default'], 'file-spice', ['default', 'wireguard'])).toEqual([
      'default',
    ]);
  });

  it('removes the RDP viewers when wireguard is removed', () => {
    const viewers = viewersMap(['browser-vnc', 'file-rdpgw']);
    expect(viewersForInterfaces(viewers, ['default'])).toEqual(viewersMap(['browser-vnc']));
    expect(viewersForInterfaces(viewers, ['default', 'wireguard'])).toBe(viewers);
  });

  it('toggles one viewer, keeping the others', () => {
    const viewers = viewersMap(['browser-vnc']);
    expect(toggleViewer(viewers, 'file-spice', true)).toEqual(
      viewersMap(['browser-vnc', 'file-spice']),
    );
    expect(toggleViewer(viewers, 'browser-vnc', false)).toEqual({});
  });
});
