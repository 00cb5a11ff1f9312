import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  configuredViewers,
  guestKey,
  NEEDS_WIREGUARD,
  NEW_DESKTOP_VIEWERS,
  VIEWER_ORDER,
  WIREGUARD_INTERFACE,
} from './viewers';

const schema = JSON.parse(
  readFileSync(join(process.cwd(), 'schema/entities/viewer-defaults.schema.json'), 'utf8'),
) as {
  $defs: Record<string, { default?: unknown; properties?: Record<string, { default: string }> }>;
  'x-constants': Record<string, { value: unknown }>;
};

describe('viewer facts', () => {
  it('come from the viewer-defaults schema: order, wireguard viewers, new-desktop viewers', () => {
    const keys = schema.$defs.keys?.properties ?? {};
    const order = schema['x-constants'].order?.value as string[];
    expect(VIEWER_ORDER).toEqual(order.map((short) => keys[short]?.default));
    expect(VIEWER_ORDER).toEqual([
      'browser-vnc',
      'file-spice',
      'browser-rdp',
      'file-rdpgw',
      'file-rdpvpn',
    ]);
    expect(NEEDS_WIREGUARD).toEqual(schema.$defs.needsWireguard?.default);
    expect(NEW_DESKTOP_VIEWERS).toEqual(schema.$defs.newDesktopDefault?.default);
    expect(WIREGUARD_INTERFACE).toBe(schema['x-constants'].wireguardInterface?.value);
  });

  it('lists the configured viewers of guest properties in the default order', () => {
    expect(guestKey('file-rdpgw')).toBe('file_rdpgw');
    expect(configuredViewers({ file_spice: {}, browser_vnc: {}, unknown: {} })).toEqual([
      'browser-vnc',
      'file-spice',
    ]);
    expect(configuredViewers(undefined)).toEqual([]);
  });
});
