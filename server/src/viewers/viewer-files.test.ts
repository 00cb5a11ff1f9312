import { describe, expect, it } from 'vitest';
import { parseIni, spiceFile } from './viewer-files.ts';
import { TicketStore } from './tickets.ts';

describe('spiceFile', () => {
  it('writes the virt-viewer keys with the proxy, port and password of the running desktop', () => {
    const text = spiceFile({
      desktopName: 'My desk',
      proxyHost: 'portal.example',
      proxyPort: 8080,
      spiceHost: '127.0.0.1',
      spicePort: 5931,
      password: 'secretpw',
      fullscreen: false,
    });
    const ini = parseIni(text);
    expect(text.startsWith('[virt-viewer]\n')).toBe(true);
    expect(ini).toMatchObject({
      type: 'spice',
      proxy: 'http://portal.example:8080',
      host: '127.0.0.1',
      port: '5931',
      password: 'secretpw',
      fullscreen: '0',
      'delete-this-file': '1',
    });
  });

  it('keeps a hostile desktop name on one line so it cannot add keys', () => {
    const text = spiceFile({
      desktopName: "x\nproxy=http://evil:1\r\n'",
      proxyHost: 'p',
      proxyPort: 1,
      spiceHost: '127.0.0.1',
      spicePort: 2,
      password: 'pw',
      fullscreen: true,
    });
    const proxies = text.split('\n').filter((l) => l.startsWith('proxy='));
    expect(proxies).toEqual(['proxy=http://p:1']);
    expect(text).not.toContain("'");
  });
});

describe('TicketStore', () => {
  it('accepts a ticket once, for its protocol, before it expires', () => {
    const store = new TicketStore(60_000);
    const { ticket } = store.issue({ userId: 'u', desktopId: 'd', protocol: 'vnc' }, 1000);
    expect(ticket.length).toBeGreaterThanOrEqual(43);
    expect(store.consume(ticket, 'vnc', 2000)).toEqual({
      userId: 'u',
      desktopId: 'd',
      protocol: 'vnc',
    });
    expect(store.consume(ticket, 'vnc', 2000)).toBeUndefined();
  });

  it('refuses expired tickets, other protocols and revoked desktops', () => {
    const store = new TicketStore(60_000);
    const a = store.issue({ userId: 'u', desktopId: 'd', protocol: 'vnc' }, 0).ticket;
    expect(store.consume(a, 'vnc', 60_001)).toBeUndefined();
    const b = store.issue({ userId: 'u', desktopId: 'd', protocol: 'vnc' }, 0).ticket;
    expect(store.consume(b, 'rdp', 1)).toBeUndefined();
    const c = store.issue({ userId: 'u', desktopId: 'd', protocol: 'vnc' }, 0).ticket;
    store.revokeDesktop('d');
    expect(store.consume(c, 'vnc', 1)).toBeUndefined();
  });
});
