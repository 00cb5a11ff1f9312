import { afterEach, describe, expect, it } from 'vitest';
import type { ViewerKey } from '@/generated/types';
import {
  orderedViewers,
  preferredViewer,
  rememberViewer,
  rememberedViewer,
  viewerBlocker,
  viewerStorageKey,
} from './viewer-order';

const all: ViewerKey[] = ['file-rdpvpn', 'browser-rdp', 'file-spice', 'file-rdpgw', 'browser-vnc'];

afterEach(() => localStorage.clear());

describe('viewer order', () => {
  it('follows the generated default order vnc, spice, rdp, rdpgw, rdpvpn', () => {
    expect(orderedViewers(all)).toEqual([
      'browser-vnc',
      'file-spice',
      'browser-rdp',
      'file-rdpgw',
      'file-rdpvpn',
    ]);
    expect(orderedViewers(['file-spice', 'browser-vnc', 'file-spice'])).toEqual([
      'browser-vnc',
      'file-spice',
    ]);
    expect(orderedViewers(undefined)).toEqual([]);
  });

  it('explains why RDP viewers cannot work without an IP, before trying', () => {
    expect(viewerBlocker({}, 'browser-rdp')).toBe('no_wireguard');
    expect(viewerBlocker({}, 'file-rdpvpn')).toBe('no_wireguard');
    expect(viewerBlocker({ ip: '10.2.0.4' }, 'file-rdpgw')).toBeNull();
    expect(viewerBlocker({}, 'browser-vnc')).toBeNull();
    expect(viewerBlocker({}, 'file-spice')).toBeNull();
  });
});

describe('remembered viewer choice', () => {
  it('is stored per user in local storage', () => {
    rememberViewer('u1', 'file-spice');
    rememberViewer('u2', 'browser-vnc');
    expect(localStorage.getItem(viewerStorageKey('u1'))).toBe('file-spice');
    expect(rememberedViewer('u1')).toBe('file-spice');
    expect(rememberedViewer('u2')).toBe('browser-vnc');
    expect(rememberedViewer('u3')).toBeNull();
  });

  it('is preferred when the desktop has it and it can work, else the first usable viewer', () => {
    const desktop = { viewers: ['file-spice', 'browser-vnc'] as ViewerKey[] };
    expect(preferredViewer(desktop, 'u1')).toBe('browser-vnc');
    rememberViewer('u1', 'file-spice');
    expect(preferredViewer(desktop, 'u1')).toBe('file-spice');
    expect(preferredViewer(desktop, 'u2')).toBe('browser-vnc');
    // A remembered viewer the desktop lacks falls back to the default order.
    expect(preferredViewer({ viewers: ['browser-vnc'] }, 'u1')).toBe('browser-vnc');
    // A remembered RDP choice is skipped while the desktop has no IP.
    rememberViewer('u3', 'browser-rdp');
    expect(preferredViewer({ viewers: ['browser-rdp', 'file-spice'] }, 'u3')).toBe('file-spice');
    expect(preferredViewer({ viewers: ['browser-rdp', 'file-spice'], ip: '10.0.0.2' }, 'u3')).toBe(
      'browser-rdp',
    );
    expect(preferredViewer({ viewers: ['browser-rdp'] }, 'u3')).toBeNull();
  });
});
