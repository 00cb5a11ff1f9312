import { describe, expect, it } from 'vitest';
import {
  interfacesForViewer,
  ORDERED_VIEWERS,
  toggleViewer,
  viewersForInterfaces,
  viewersMap,
} from './viewer-rules';

describe('viewer rules', () => {
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
