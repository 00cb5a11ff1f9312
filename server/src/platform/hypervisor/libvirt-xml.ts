/**
 * Libvirt domain XML, both ways, with no I/O: the XML of a start, made from the same
 * {@link DomainSpec} the QEMU driver turns into a command line, and what the driver reads back from
 * a live domain's XML (its consoles' ports, the portal's metadata, a graphics element to change a
 * password). Unit-tested in `libvirt-xml.test.ts`.
 */
import { RNG_BYTES_PER_PERIOD, RNG_PERIOD_MS, validateSpec } from './qemu-command.ts';
import { HypervisorError, type Accel, type BootDevice, type DomainSpec } from './types.ts';

/** XML namespace of the portal's metadata element in a domain. */
export const METADATA_NAMESPACE = 'urn:vdi-portal:desktop:1';

/** How one start is defined; chosen by the driver. */
export interface LibvirtDomainContext {
  /** The libvirt domain name (the driver's prefix + the desktop id). */
  domainName: string;
  accel: Accel;
  /** ISO-8601 time of the start, kept in the metadata for adoption. */
  startedAt: string;
  /**
   * SPICE over TLS only (`defaultMode='secure'`): the host's `qemu.conf` must enable `spice_tls`
   * with its certificates.
   */
  spiceTls: boolean;
  /** The address VNC and SPICE listen on (the host's console address). Default 127.0.0.1. */
  listen?: string;
  /**
   * The main disk as the host opens it (a storage pool volume's path there); absent: the spec's
   * `diskPath`, which the metadata keeps either way.
   */
  diskSource?: string;
  /** The domain's network cards, in order (none when absent). */
  nics?: LibvirtNic[];
}

/**
 * A network card of a libvirt domain: a TAP device libvirt plugs into a bridge of the host
 * (`<interface type='bridge'>`; under `qemu:///session` through the setuid `qemu-bridge-helper`,
 * which `/etc/qemu/bridge.conf` must allow the bridge), or QEMU's user-mode network (outbound
 * only) without one.
 */
export interface LibvirtNic {
  mac: string;
  bridge?: string;
}

/** What the portal keeps in a domain's metadata: enough to adopt it after a restart. */
export interface DomainMetadata {
  id: string;
  name: string;
  startedAt: string;
  accel: Accel;
  diskPath: string;
}

/** The consoles of a live domain, from its XML. */
export interface LiveGraphics {
  vncPort: number;
  spicePort: number;
  /** True when the SPICE port is the TLS one. */
  spiceTls: boolean;
  /** The address VNC listens on, when the XML names one. */
  listen?: string;
}

const MAC_PATTERN = /^52:54:00(:[0-9a-f]{2}){3}$/;
const BRIDGE_PATTERN = /^[A-Za-z0-9_.-]{1,15}$/;

/** The `<interface>` elements of the cards; throws `invalid_spec` for a bad MAC or bridge name. */
function interfaceLines(nics: readonly LibvirtNic[]): string[] {
  return nics.flatMap((nic) => {
    if (!MAC_PATTERN.test(nic.mac))
      throw new HypervisorError('invalid_spec', `invalid MAC address ${JSON.stringify(nic.mac)}`);
    if (nic.bridge !== undefined && !BRIDGE_PATTERN.test(nic.bridge))
      throw new HypervisorError(
        'invalid_spec',
        `invalid bridge name ${JSON.stringify(nic.bridge)}`,
      );
    return [
      `    <interface type='${nic.bridge ? 'bridge' : 'user'}'>`,
      `      <mac address='${nic.mac}'/>`,
      ...(nic.bridge ? [`      <source bridge='${nic.bridge}'/>`] : []),
      "      <model type='virtio'/>",
      '    </interface>',
    ];
  });
}

const BOOT_DEV: Record<BootDevice, string> = {
  disk: 'hd',
  iso: 'cdrom',
  floppy: 'fd',
  pxe: 'network',
};

/** Escapes text for an XML attribute or element. */
export function xmlEscape(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll("'", '&apos;')
    .replaceAll('"', '&quot;');
}

/** Reverses {@link xmlEscape} (and the numeric references libvirt may write). */
export function xmlUnescape(value: string): string {
  return value
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCodePoint(parseInt(code, 16)))
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&apos;', "'")
    .replaceAll('&quot;', '"')
    .replaceAll('&amp;', '&');
}

/** Printable single-line name (no control characters, at most 100 chars). */
function cleanName(name: string): string {
  const cleaned = name
    .replace(/\p{Cc}/gu, ' ')
    .trim()
    .slice(0, 100);
  return cleaned || 'desktop';
}

/** The IDE target names (`hda`..`hdd`) of the CD-ROMs, after the main disk when it is on IDE. */
function cdTargets(spec: DomainSpec): string[] {
  const first = spec.hardware.diskBus === 'ide' && spec.diskPath ? 1 : 0;
  return spec.hardware.isos.map((_, i) => `hd${String.fromCharCode(97 + first + i)}`);
}

function mainDiskTarget(bus: DomainSpec['hardware']['diskBus']): string {
  if (bus === 'virtio') return "dev='vda' bus='virtio'";
  if (bus === 'ide') return "dev='hda' bus='ide'";
  return "dev='sda' bus='sata'";
}

/**
 * The `<domain>` XML of one start: the machine, CPUs, memory, main disk on its bus, ISOs as
 * read-only IDE CD-ROMs, read-only floppies, boot order, video, VNC and SPICE on the console address with this
 * start's passwords (VNC uses only the first 8 characters: the rest is cut, as QEMU would), the
 * network cards of the context (virtio, on a host bridge or user-mode), no USB, no balloon. Throws
 * `invalid_spec` like the QEMU driver.
 */
export function buildDomainXml(spec: DomainSpec, ctx: LibvirtDomainContext): string {
  validateSpec(spec);
  const hw = spec.hardware;
  const e = xmlEscape;
  const lines: string[] = [
    `<domain type='${ctx.accel === 'kvm' ? 'kvm' : 'qemu'}'>`,
    `  <name>${e(ctx.domainName)}</name>`,
    `  <title>${e(cleanName(spec.name))}</title>`,
    '  <metadata>',
    `    <vdi:desktop xmlns:vdi='${METADATA_NAMESPACE}' id='${e(spec.id)}' started-at='${e(ctx.startedAt)}' accel='${ctx.accel}'>`,
    `      <vdi:name>${e(cleanName(spec.name))}</vdi:name>`,
    `      <vdi:disk>${e(spec.diskPath)}</vdi:disk>`,
    '    </vdi:desktop>',
    '  </metadata>',
    `  <memory unit='MiB'>${hw.memoryMiB}</memory>`,
    `  <vcpu>${hw.vcpus}</vcpu>`,
    '  <os>',
    "    <type arch='x86_64' machine='pc'>hvm</type>",
  ];
  for (const dev of [...new Set(hw.bootOrder.map((d) => BOOT_DEV[d]))])
    lines.push(`    <boot dev='${dev}'/>`);
  lines.push('  </os>', '  <features><acpi/></features>');
  if (ctx.accel === 'kvm') lines.push("  <cpu mode='host-passthrough'/>");
  lines.push(
    '  <on_poweroff>destroy</on_poweroff>',
    '  <on_reboot>restart</on_reboot>',
    '  <on_crash>destroy</on_crash>',
    '  <devices>',
  );
  if (spec.diskPath) {
    lines.push(
      "    <disk type='file' device='disk'>",
      "      <driver name='qemu' type='qcow2'/>",
      `      <source file='${e(ctx.diskSource ?? spec.diskPath)}'/>`,
      `      <target ${mainDiskTarget(hw.diskBus)}/>`,
      '    </disk>',
    );
  }
  const targets = cdTargets(spec);
  hw.isos.forEach((iso, i) => {
    lines.push(
      "    <disk type='file' device='cdrom'>",
      "      <driver name='qemu' type='raw'/>",
      `      <source file='${e(iso)}'/>`,
      `      <target dev='${targets[i] ?? ''}' bus='ide'/>`,
      '      <readonly/>',
      '    </disk>',
    );
  });
  hw.floppies.forEach((img, i) => {
    lines.push(
      "    <disk type='file' device='floppy'>",
      "      <driver name='qemu' type='raw'/>",
      `      <source file='${e(img)}'/>`,
      `      <target dev='fd${String.fromCharCode(97 + i)}' bus='fdc'/>`,
      '      <readonly/>',
      '    </disk>',
    );
  });
  lines.push(...interfaceLines(ctx.nics ?? []));
  const video = hw.video === 'virtio' ? 'virtio' : hw.video === 'none' ? 'none' : 'vga';
  const listen = `      <listen type='address' address='${e(ctx.listen ?? '127.0.0.1')}'/>`;
  lines.push(
    `    <graphics type='vnc' autoport='yes' passwd='${e(spec.vncPassword.slice(0, 8))}'>`,
    listen,
    '    </graphics>',
    `    <graphics type='spice' autoport='yes' passwd='${e(spec.spicePassword)}'${ctx.spiceTls ? " defaultMode='secure'" : ''}>`,
    listen,
    '    </graphics>',
    `    <video><model type='${video}'/></video>`,
    // The same random number generator as the QEMU driver's (see buildQemuArgs).
    "    <rng model='virtio'>",
    `      <rate bytes='${RNG_BYTES_PER_PERIOD}' period='${RNG_PERIOD_MS}'/>`,
    "      <backend model='builtin'/>",
    '    </rng>',
    "    <controller type='usb' model='none'/>",
    "    <memballoon model='none'/>",
    '  </devices>',
    '</domain>',
  );
  return `${lines.join('\n')}\n`;
}

/** The interface names of `virsh iface-list --all` (its table's first column). */
export function hostInterfaces(table: string): string[] {
  return table
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter(
      (name, i, all) => name && name !== 'Name' && !/^-+$/.test(name) && all.indexOf(name) === i,
    );
}

/** The value of `name` in an element's opening tag, unescaped. */
function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}=(?:'([^']*)'|"([^"]*)")`).exec(tag);
  const value = match?.[1] ?? match?.[2];
  return value === undefined ? undefined : xmlUnescape(value);
}

/** The whole `<graphics type='…'>` element of a domain's XML, as libvirt wrote it. */
export function graphicsElement(domainXml: string, type: 'vnc' | 'spice'): string | undefined {
  const re = new RegExp(`<graphics\\s[^>]*type=['"]${type}['"][^>]*?(?:/>|>[\\s\\S]*?</graphics>)`);
  return re.exec(domainXml)?.[0];
}

/** The consoles' ports of a live domain. Throws `start_failed` when libvirt gave none. */
export function liveGraphics(domainXml: string): LiveGraphics {
  const vnc = graphicsElement(domainXml, 'vnc');
  const spice = graphicsElement(domainXml, 'spice');
  const vncPort = Number(vnc ? attribute(vnc, 'port') : NaN);
  const tlsPort = Number(spice ? attribute(spice, 'tlsPort') : NaN);
  const plainPort = Number(spice ? attribute(spice, 'port') : NaN);
  const spiceTls = spice !== undefined && attribute(spice, 'defaultMode') === 'secure';
  const spicePort = spiceTls ? tlsPort : plainPort;
  if (!(vncPort > 0) || !(spicePort > 0))
    throw new HypervisorError('start_failed', 'the live domain has no VNC or SPICE port');
  const listenTag = vnc ? /<listen\s[^>]*>/.exec(vnc)?.[0] : undefined;
  const listen =
    (listenTag ? attribute(listenTag, 'address') : undefined) ?? attribute(vnc ?? '', 'listen');
  return { vncPort, spicePort, spiceTls, ...(listen ? { listen } : {}) };
}

/** The portal's metadata in a domain's XML; undefined for a domain the portal did not define. */
export function readMetadata(domainXml: string): DomainMetadata | undefined {
  const open = /<(\w+:)?desktop\s[^>]*xmlns(?::\w+)?=['"]urn:vdi-portal:desktop:1['"][^>]*>/.exec(
    domainXml,
  );
  if (!open) return undefined;
  const tag = open[0];
  const prefix = open[1] ?? '';
  const body = domainXml.slice(open.index + tag.length);
  const text = (name: string) => {
    const match = new RegExp(`<${prefix}${name}>([\\s\\S]*?)</${prefix}${name}>`).exec(body);
    return match?.[1] === undefined ? undefined : xmlUnescape(match[1]);
  };
  const id = attribute(tag, 'id');
  const accel = attribute(tag, 'accel');
  if (!id) return undefined;
  return {
    id,
    name: text('name') ?? id,
    startedAt: attribute(tag, 'started-at') ?? '',
    accel: accel === 'kvm' ? 'kvm' : 'tcg',
    diskPath: text('disk') ?? '',
  };
}

/**
 * A graphics element with a new password, for `virsh update-device`: `passwd` replaced,
 * `passwdValidTo` set to `validTo` (UTC, `YYYY-MM-DDTHH:MM:SS`) or removed (never expires), and
 * `connected='keep'` so the clients connected now stay.
 */
export function withPassword(element: string, password: string, validTo?: Date): string {
  const end = element.indexOf('>');
  let tag = element.slice(0, end).replace(/\/$/, '');
  const rest = element.slice(end);
  const selfClosing = element.slice(0, end).endsWith('/');
  for (const name of ['passwd', 'passwdValidTo', 'connected'])
    tag = tag.replace(new RegExp(`\\s${name}=(?:'[^']*'|"[^"]*")`), '');
  tag += ` passwd='${xmlEscape(password)}'`;
  if (validTo) tag += ` passwdValidTo='${validTo.toISOString().slice(0, 19)}'`;
  tag += " connected='keep'";
  return `${tag}${selfClosing ? '/' : ''}${rest}`;
}
