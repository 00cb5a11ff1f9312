import { describe, expect, it } from 'vitest';
import { parseIni, parseRdp, rdpFile, spiceFile } from './viewer-files.ts';
import { TicketStore } from './tickets.ts';

describe('rdpFile', () => {
  it('writes the RDP-over-VPN file from the desktop address and guest credentials, without a gateway', () => {
    const text = rdpFile({ address: '10.20.0.7', username: 'isard', password: 'p:ss' });
    const rdp = parseRdp(text);
    expect(text.split('\n')[0]).toBe('full address:s:10.20.0.7');
    expect(rdp).toMatchObject({
      'full address': '10.20.0.7',
      username: 'isard',
      password: 'p:ss',
      gatewayhostname: '',
      gatewayusagemethod: '4',
      gatewaycredentialssource: '4',
      redirectclipboard: '1',
      'prompt for credentials': '0',
    });
    expect(rdp.gatewayaccesstoken).toBeUndefined();
    expect(text.endsWith('\n')).toBe(true);
  });

  it('writes the RD-gateway file with the gateway host, port and access token', () => {
    const rdp = parseRdp(
      rdpFile({
        address: '10.20.0.7',
        username: 'isard',
        password: 'pw',
        gateway: { host: 'vdi.example.org', port: 443, accessToken: 'tok_1' },
      }),
    );
    expect(rdp).toMatchObject({
      'full address': '10.20.0.7',
      gatewayhostname: 'vdi.example.org:443',
      gatewayaccesstoken: 'tok_1',
      gatewayusagemethod: '1',
      gatewaycredentialssource: '5',
      gatewayprofileusagemethod: '1',
      'smart sizing': '1',
    });
  });

  it('keeps a line break in a credential from adding a key', () => {
    const text = rdpFile({
      address: '10.20.0.7\nalternate shell:s:cmd',
      username: 'a\r\nalternate shell:s:evil',
      password: 'x\ndrivestoredirect:s:*',
    });
    const rdp = parseRdp(text);
    expect(rdp['alternate shell']).toBe('');
    expect(rdp.drivestoredirect).toBe('');
    expect(text.split('\n').filter((l) => l.startsWith('username:'))).toHaveLength(1);
  });
});

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

  it('offers a plain port without secure channels (a client told to secure them refuses it)', () => {
    const text = spiceFile({
      desktopName: 'd',
      proxyHost: 'p',
      proxyPort: 1,
      spiceHost: '127.0.0.1',
      spicePort: 5931,
      password: 'pw',
      fullscreen: false,
    });
    const ini = parseIni(text);
    expect(ini.port).toBe('5931');
    expect(ini['tls-port']).toBeUndefined();
    expect(ini['secure-channels']).toBeUndefined();
  });

  it('offers a TLS-only port with the CA (one line, \\n between PEM lines), the server subject and every channel secured', () => {
    const caCertPem = '-----BEGIN CERTIFICATE-----\nMIIBabc\nDEF=\n-----END CERTIFICATE-----\n';
    const text = spiceFile({
      desktopName: 'd',
      proxyHost: 'p',
      proxyPort: 1,
      spiceHost: '127.0.0.1',
      spicePort: 5931,
      tls: { caCertPem, hostSubject: 'CN=vdi-portal-spice' },
      password: 'pw',
      fullscreen: false,
    });
    const ini = parseIni(text);
    expect(ini.port).toBeUndefined();
    expect(ini['tls-port']).toBe('5931');
    expect(ini.ca).toBe(
      '-----BEGIN CERTIFICATE-----\\nMIIBabc\\nDEF=\\n-----END CERTIFICATE-----\\n',
    );
    expect(ini['host-subject']).toBe('CN=vdi-portal-spice');
    expect(ini['secure-channels']).toBe(
      'main;inputs;cursor;playback;record;display;usbredir;smartcard',
    );
    expect(text.split('\n').filter((l) => l.startsWith('ca='))).toHaveLength(1);
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

describe('spiceFile proxy credential', () => {
  const input = {
    desktopName: 'd',
    proxyHost: 'vdi.example.org',
    proxyPort: 443,
    spiceHost: '127.0.0.1',
    spicePort: 5930,
    password: 'pw',
    fullscreen: false,
  };

  it('writes the tunnel credential as the userinfo of the proxy URL, with the public scheme', () => {
    const text = spiceFile({
      ...input,
      proxyScheme: 'https',
      proxyCredential: { username: 'Abc_-1', secret: 'S3cr3t-_x' },
    });
    expect(parseIni(text).proxy).toBe('https://Abc_-1:S3cr3t-_x@vdi.example.org:443');
    const url = new URL(parseIni(text).proxy ?? '');
    expect([url.username, url.password, url.hostname]).toEqual([
      'Abc_-1',
      'S3cr3t-_x',
      'vdi.example.org',
    ]);
  });

  it('refuses a credential spice-gtk would split or misread', () => {
    for (const bad of ['a:b', 'a@b', 'a/b', 'a b', ''])
      expect(() =>
        spiceFile({ ...input, proxyCredential: { username: 'user', secret: bad } }),
      ).toThrow();
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

  it('keeps the login session a ticket was issued to and forgets it when that session ends', () => {
    const store = new TicketStore(60_000);
    const claims = { userId: 'u', desktopId: 'd', protocol: 'vnc', sessionId: 's1' } as const;
    const a = store.issue(claims, 0).ticket;
    expect(store.consume(a, 'vnc', 1)?.sessionId).toBe('s1');
    const b = store.issue(claims, 0).ticket;
    const other = store.issue({ ...claims, sessionId: 's2' }, 0).ticket;
    store.revokeSession('s1');
    expect(store.consume(b, 'vnc', 1)).toBeUndefined();
    expect(store.consume(other, 'vnc', 1)?.sessionId).toBe('s2');
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
