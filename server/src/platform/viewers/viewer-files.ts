/**
 * Native-client viewer files (.vv, .rdp). Values are sanitised so that a desktop name cannot
 * inject lines or keys into the file.
 */

/** Removes line breaks, control characters and quotes a config value could use to inject keys. */
export function safeValue(value: string): string {
  return value.replace(/[\p{Cc}'"]/gu, ' ').trim();
}

export interface SpiceFileInput {
  desktopName: string;
  /** host:port of our HTTP CONNECT proxy (the portal's public address). */
  proxyHost: string;
  proxyPort: number;
  /** `http` (default) or `https` when the public address is TLS. */
  proxyScheme?: 'http' | 'https';
  /**
   * The tunnel credential, written as the proxy URL's userinfo (spice-gtk sends it as
   * `Proxy-Authorization: Basic`). Both parts must be URL-safe without escaping: spice-gtk does not
   * percent-decode them and splits at the first `@` and `:`.
   */
  proxyCredential?: { username: string; secret: string };
  /** Where the proxy tunnels to: the QEMU SPICE listener on the hypervisor's loopback. */
  spiceHost: string;
  spicePort: number;
  /**
   * The SPICE port speaks TLS only: the client checks the server certificate against `caCertPem`
   * and its subject against `hostSubject`, and every channel is encrypted.
   */
  tls?: { caCertPem: string; hostSubject: string };
  password: string;
  fullscreen: boolean;
}

/** Default custom lines of the SPICE file. */
export const SPICE_CUSTOM_LINES = [
  'enable-smartcard=0',
  'enable-usb-autoshare=1',
  'delete-this-file=1',
  'usb-filter=-1,-1,-1,-1,0',
  'toggle-fullscreen=shift+f11',
  'release-cursor=shift+f12',
  'secure-attention=ctrl+alt+end',
];

/**
 * The lines of a TLS-only SPICE port. `secure-channels` is written only with them: a client told
 * to secure its channels but given no `tls-port` refuses to connect.
 */
function spiceTlsLines(port: number, tls: { caCertPem: string; hostSubject: string }): string[] {
  const ca = tls.caCertPem.trim().split(/\r?\n/).join('\\n');
  return [
    `tls-port=${port}`,
    `ca=${ca}\\n`,
    `host-subject=${safeValue(tls.hostSubject)}`,
    'tls-ciphers=DEFAULT',
    'secure-channels=main;inputs;cursor;playback;record;display;usbredir;smartcard',
  ];
}

const URL_SAFE = /^[A-Za-z0-9_-]+$/;

/** The `.vv` file for virt-viewer / remote-viewer. */
export function spiceFile(input: SpiceFileInput): string {
  const credential = input.proxyCredential;
  if (credential && !(URL_SAFE.test(credential.username) && URL_SAFE.test(credential.secret)))
    throw new Error('the SPICE tunnel credential must be URL-safe');
  const userinfo = credential ? `${credential.username}:${credential.secret}@` : '';
  const host = safeValue(input.proxyHost).replace(/[\s/@]/g, '');
  const lines = [
    '[virt-viewer]',
    'type=spice',
    `proxy=${input.proxyScheme ?? 'http'}://${userinfo}${host}:${input.proxyPort}`,
    `host=${safeValue(input.spiceHost)}`,
    ...(input.tls ? spiceTlsLines(input.spicePort, input.tls) : [`port=${input.spicePort}`]),
    `password=${safeValue(input.password)}`,
    `fullscreen=${input.fullscreen ? 1 : 0}`,
    `title=${safeValue(input.desktopName)}:%d - Press SHIFT+F12 to release the cursor`,
    ...SPICE_CUSTOM_LINES,
  ];
  return `${lines.map((l) => l.trim()).join('\n')}\n`;
}

/** Parses a `key=value` file (tests and the CONNECT proxy's own checks). */
export function parseIni(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

/** Removes what could end a `.rdp` line (line breaks, every control character). */
function rdpValue(value: string): string {
  return value.replace(/\p{Cc}/gu, '').trim();
}

/** Redirection and display lines shared by both `.rdp` files. */
const RDP_COMMON_LINES = [
  'enableworkspacereconnect:i:0',
  'disable wallpaper:i:0',
  'allow desktop composition:i:0',
  'disable full window drag:i:1',
  'disable menu anims:i:1',
  'disable themes:i:0',
  'disable cursor setting:i:0',
  'bitmapcachepersistenable:i:1',
  'audiomode:i:0',
  'redirectprinters:i:1',
  'redirectcomports:i:0',
  'redirectsmartcards:i:1',
  'redirectclipboard:i:1',
  'redirectposdevices:i:0',
  'drivestoredirect:s:',
  'autoreconnection enabled:i:1',
  'authentication level:i:2',
  'prompt for credentials:i:0',
  'negotiate security layer:i:1',
  'remoteapplicationmode:i:0',
  'alternate shell:s:',
  'shell working directory:s:',
  'promptcredentialonce:i:0',
  'gatewaybrokeringtype:i:0',
  'use redirection server name:i:0',
  'rdgiskdcproxy:i:0',
  'kdcproxyname:s:',
];

/** Default custom lines of the RDP-over-VPN file: no gateway, the client is on the VPN. */
export const RDP_VPN_CUSTOM_LINES = [
  ...RDP_COMMON_LINES,
  'allow font smoothing:i:0',
  'gatewayhostname:s:',
  'gatewayusagemethod:i:4',
  'gatewaycredentialssource:i:4',
  'gatewayprofileusagemethod:i:0',
];

/** Default custom lines of the RD-gateway file. */
export const RDP_GATEWAY_CUSTOM_LINES = [
  ...RDP_COMMON_LINES,
  'allow font smoothing:i:1',
  'gatewayusagemethod:i:1',
  'gatewaycredentialssource:i:5',
  'gatewayprofileusagemethod:i:1',
  'networkautodetect:i:1',
  'bandwidthautodetect:i:1',
  'connection type:i:6',
  'domain:s:',
  'bitmapcachesize:i:32000',
  'smart sizing:i:1',
];

export interface RdpFileInput {
  /** The desktop's own network address. */
  address: string;
  /** The desktop's guest credentials. */
  username: string;
  password: string;
  /** Through the RD gateway: its public host and port and the access token it checks. */
  gateway?: { host: string; port: number; accessToken: string };
}

/**
 * A `.rdp` file for mstsc / Remote Desktop clients: the desktop's address and guest credentials,
 * and for the gateway variant the gateway and its access token; then the custom lines. Without a
 * gateway the client must reach the address itself (over the users' VPN).
 */
export function rdpFile(input: RdpFileInput): string {
  const address = rdpValue(input.address).replace(/\s/g, '');
  const gateway = input.gateway;
  const lines = [
    `full address:s:${address}`,
    ...(gateway
      ? [
          `gatewayhostname:s:${rdpValue(gateway.host).replace(/[\s/@]/g, '')}:${gateway.port}`,
          `gatewayaccesstoken:s:${rdpValue(gateway.accessToken)}`,
        ]
      : []),
    `username:s:${rdpValue(input.username)}`,
    `password:s:${rdpValue(input.password)}`,
    ...(gateway ? RDP_GATEWAY_CUSTOM_LINES : RDP_VPN_CUSTOM_LINES),
  ];
  return `${lines.map((l) => l.trim()).join('\n')}\n`;
}

/** Parses a `.rdp` file (`key:type:value` lines) into key → value (tests). */
export function parseRdp(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([^:]+):([isb]):(.*)$/.exec(line);
    if (match?.[1]) out[match[1]] = match[3] ?? '';
  }
  return out;
}
