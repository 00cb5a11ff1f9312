import { describe, expect, it } from 'vitest';
import {
  buildDomainXml,
  graphicsElement,
  hostInterfaces,
  liveGraphics,
  readMetadata,
  withPassword,
  xmlEscape,
  xmlUnescape,
  type LibvirtDomainContext,
} from './libvirt-xml.ts';
import { parseEventLine } from './libvirt-events.ts';
import { decodePng, encodePng, ppmToPng } from './png.ts';
import { HostNics } from './libvirt-start.ts';
import { quoteArg } from './virsh-session.ts';
import { demoSpec } from './test-support.ts';
import type { DomainSpec } from './types.ts';

const ctx: LibvirtDomainContext = {
  domainName: 'vdi-d1',
  accel: 'tcg',
  startedAt: '2026-01-02T03:04:05.000Z',
  spiceTls: false,
};

function spec(hw: Partial<DomainSpec['hardware']> = {}, extra: Partial<DomainSpec> = {}) {
  return { ...demoSpec('d1', '/data/disks/d1.qcow2', hw), ...extra };
}

/** The values of `attr` on every `<tag …>` of the XML. */
function attrs(xml: string, tag: string, attr: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}\\s[^>]*${attr}='([^']*)'`, 'g'))].map(
    (m) => m[1] ?? '',
  );
}

describe('libvirt domain XML', () => {
  it("carries the desktop's cards: on a host bridge, else user-mode, virtio with their MACs", async () => {
    const nics = [{ mac: '52:54:00:0a:0b:0c', bridge: 'vdinat0' }, { mac: '52:54:00:01:02:03' }];
    const xml = buildDomainXml(spec(), { ...ctx, nics });
    expect(attrs(xml, 'interface', 'type')).toEqual(['bridge', 'user']);
    expect(attrs(xml, 'mac', 'address')).toEqual(nics.map((n) => n.mac));
    expect(attrs(xml, 'source', 'bridge')).toEqual(['vdinat0']);
    expect(attrs(xml, 'model', 'type').filter((m) => m === 'virtio')).toHaveLength(2);
    for (const bad of [{ mac: '00:11:22:33:44:55' }, { mac: nics[1]?.mac ?? '', bridge: "br'0" }])
      expect(() => buildDomainXml(spec(), { ...ctx, nics: [bad] })).toThrow(/invalid/);

    // The host's interfaces decide: a network whose bridge it lacks is user-mode; all are once
    // the host refused a bridge.
    const table = [
      ' Name      State      MAC Address',
      '-----------------------------------------',
      ' eth0      active     02:fc:00:00:00:01',
      ' vdinat0   inactive   00:00:00:00:00:00',
    ].join('\n');
    expect(hostInterfaces(table)).toEqual(['eth0', 'vdinat0']);
    const session = { run: () => Promise.resolve(table) };
    const bridges = new Map([
      ['default', 'vdinat0'],
      ['private', 'vdiprv0'],
    ]);
    const lines: string[] = [];
    const host = new HostNics(
      session,
      'hostA',
      () => Promise.resolve(bridges),
      (l) => lines.push(l),
    );
    const cards = spec(
      {},
      {
        network: [
          { network: 'default', mac: '52:54:00:00:00:01' },
          { network: 'private', mac: '52:54:00:00:00:02' },
        ],
      },
    );
    expect(await host.of(cards)).toEqual([
      { mac: '52:54:00:00:00:01', bridge: 'vdinat0' },
      { mac: '52:54:00:00:00:02' },
    ]);
    host.refuse('no bridge helper');
    host.refuse('no bridge helper');
    expect(lines).toEqual(['hostA refused a bridge, its cards are user-mode: no bridge helper']);
    expect((await host.of(cards)).every((nic) => !('bridge' in nic))).toBe(true);
  });

  it('describes the machine, CPUs, memory, disk, consoles on loopback and no NIC', () => {
    const xml = buildDomainXml(spec({ vcpus: 2, memoryMiB: 256 }), ctx);
    expect(xml).toContain("<domain type='qemu'>");
    expect(xml).toContain('<name>vdi-d1</name>');
    expect(xml).toContain("<type arch='x86_64' machine='pc'>hvm</type>");
    expect(xml).toContain("<memory unit='MiB'>256</memory>");
    expect(xml).toContain('<vcpu>2</vcpu>');
    expect(xml).toContain("<source file='/data/disks/d1.qcow2'/>");
    expect(xml).toContain("<target dev='vda' bus='virtio'/>");
    expect(attrs(xml, 'graphics', 'type')).toEqual(['vnc', 'spice']);
    expect(attrs(xml, 'listen', 'address')).toEqual(['127.0.0.1', '127.0.0.1']);
    // A host's console address is where both consoles listen.
    const remote = buildDomainXml(spec(), { ...ctx, listen: '10.0.0.5' });
    expect(attrs(remote, 'listen', 'address')).toEqual(['10.0.0.5', '10.0.0.5']);
    expect(attrs(xml, 'graphics', 'passwd')).toEqual(['vncpass1', 'spicepass']);
    expect(xml).not.toContain('<interface');
    expect(xml).toContain("<controller type='usb' model='none'/>");
    expect(xml).toMatch(
      /<rng model='virtio'>\s*<rate bytes='1024' period='1000'\/>\s*<backend model='builtin'\/>\s*<\/rng>/,
    );
    expect(xml).toContain("<model type='vga'/>");
    expect(xml).not.toContain('<cpu');
    expect(buildDomainXml(spec(), { ...ctx, accel: 'kvm' })).toMatch(
      /<domain type='kvm'>[\s\S]*<cpu mode='host-passthrough'\/>/,
    );
  });

  it('puts the disk on its bus, ISOs on IDE after it, floppies read-only, in boot order', () => {
    const ide = buildDomainXml(
      spec({ diskBus: 'ide', isos: ['/i/a.iso', '/i/b.iso'], bootOrder: ['iso', 'disk', 'iso'] }),
      ctx,
    );
    expect(attrs(ide, 'target', 'dev')).toEqual(['hda', 'hdb', 'hdc']);
    expect(attrs(ide, 'boot', 'dev')).toEqual(['cdrom', 'hd']);
    expect(ide.match(/<readonly\/>/g)).toHaveLength(2);

    const sata = buildDomainXml(
      spec({ diskBus: 'sata', isos: ['/i/a.iso'], floppies: ['/f/a.img', '/f/b.img'] }),
      ctx,
    );
    expect(attrs(sata, 'target', 'dev')).toEqual(['sda', 'hda', 'fda', 'fdb']);
    expect(attrs(sata, 'target', 'bus')).toEqual(['sata', 'ide', 'fdc', 'fdc']);
    expect(attrs(sata, 'disk', 'device')).toEqual(['disk', 'cdrom', 'floppy', 'floppy']);

    const diskless = buildDomainXml(spec({ bootOrder: ['pxe', 'floppy'] }, { diskPath: '' }), ctx);
    expect(diskless).not.toContain("device='disk'");
    expect(attrs(diskless, 'boot', 'dev')).toEqual(['network', 'fd']);
  });

  it('maps the video models', () => {
    const model = (video: DomainSpec['hardware']['video']) =>
      attrs(buildDomainXml(spec({ video }), ctx), 'model', 'type');
    expect(model('default')).toEqual(['vga']);
    expect(model('vga')).toEqual(['vga']);
    expect(model('virtio')).toEqual(['virtio']);
    expect(model('none')).toEqual(['none']);
  });

  it('escapes names and passwords, cuts the VNC password at 8, and refuses bad specs', () => {
    const xml = buildDomainXml(
      spec(
        {},
        { name: `<Ann's "desk"> & co\n`, vncPassword: "a'b&c<d>efgh", spicePassword: 'x"y' },
      ),
      ctx,
    );
    expect(xml).toContain('<title>&lt;Ann&apos;s &quot;desk&quot;&gt; &amp; co</title>');
    expect(attrs(xml, 'graphics', 'passwd')).toEqual(['a&apos;b&amp;c&lt;d&gt;', 'x&quot;y']);
    expect(xmlUnescape(xmlEscape(`<'"&>`))).toBe(`<'"&>`);
    expect(() => buildDomainXml(spec({ vcpus: 0 }), ctx)).toThrow(/vcpus/);
    expect(() => buildDomainXml(spec({}, { vncPassword: '' }), ctx)).toThrow(/vncPassword/);
    expect(() => buildDomainXml(spec({}, { diskPath: 'relative.qcow2' }), ctx)).toThrow(/absolute/);
  });

  it('keeps the metadata adoption reads back, as libvirt writes it out again', () => {
    const xml = buildDomainXml(spec({}, { name: 'Ann & Bob' }), ctx);
    expect(readMetadata(xml)).toEqual({
      id: 'd1',
      name: 'Ann &amp; Bob'.replace('&amp;', '&'),
      startedAt: ctx.startedAt,
      accel: 'tcg',
      diskPath: '/data/disks/d1.qcow2',
    });
    // libvirt's dumpxml uses its own prefix spacing and double quotes for the namespace
    const live = `<domain><metadata>
    <vdi:desktop xmlns:vdi="urn:vdi-portal:desktop:1" id="d2" started-at="t" accel="kvm">
      <vdi:name>Two</vdi:name>
      <vdi:disk>/d/2.qcow2</vdi:disk>
    </vdi:desktop>
  </metadata></domain>`;
    expect(readMetadata(live)).toMatchObject({ id: 'd2', name: 'Two', accel: 'kvm' });
    expect(readMetadata('<domain><name>other</name></domain>')).toBeUndefined();
  });
});

describe('live domain XML', () => {
  const live = `<domain type='qemu' id='3'>
    <devices>
      <graphics type='vnc' port='25901' autoport='yes' listen='127.0.0.1' passwd='old'>
        <listen type='address' address='127.0.0.1'/>
      </graphics>
      <graphics type='spice' port='25902' tlsPort='25903' autoport='yes' listen='127.0.0.1'>
        <listen type='address' address='127.0.0.1'/>
      </graphics>
    </devices>
  </domain>`;

  it('reads the consoles’ ports (the TLS one when SPICE is secure only) and their address', () => {
    expect(liveGraphics(live)).toEqual({
      vncPort: 25901,
      spicePort: 25902,
      spiceTls: false,
      listen: '127.0.0.1',
    });
    const secure = live.replace("tlsPort='25903'", "tlsPort='25903' defaultMode='secure'");
    expect(liveGraphics(secure)).toEqual({
      vncPort: 25901,
      spicePort: 25903,
      spiceTls: true,
      listen: '127.0.0.1',
    });
    const remote = live.replaceAll('127.0.0.1', '10.0.0.5');
    expect(liveGraphics(remote)).toMatchObject({ listen: '10.0.0.5' });
    expect(() => liveGraphics('<domain/>')).toThrow(/no VNC or SPICE port/);
  });

  it('changes a password in the graphics element, with or without an expiry, keeping clients', () => {
    const vnc = graphicsElement(live, 'vnc') ?? '';
    expect(vnc).toMatch(/^<graphics type='vnc'[\s\S]*<\/graphics>$/);
    const changed = withPassword(vnc, 'n&w', new Date('2026-03-04T05:06:07.890Z'));
    expect(changed).toMatch(
      /^<graphics type='vnc' port='25901' autoport='yes' listen='127.0.0.1' passwd='n&amp;w' passwdValidTo='2026-03-04T05:06:07' connected='keep'>/,
    );
    expect(changed).toContain("<listen type='address' address='127.0.0.1'/>");
    const again = withPassword(changed, 'second');
    expect(again).not.toContain('passwdValidTo');
    expect(again.match(/passwd=/g)).toHaveLength(1);
    expect(withPassword("<graphics type='spice' port='1'/>", 'p')).toBe(
      "<graphics type='spice' port='1' passwd='p' connected='keep'/>",
    );
  });
});

describe('virsh plumbing', () => {
  it('parses lifecycle and reboot events, with or without timestamps', () => {
    expect(parseEventLine("event 'lifecycle' for domain 'vdi-a': Suspended Paused")).toEqual({
      type: 'lifecycle',
      domain: 'vdi-a',
      event: 'Suspended',
      detail: 'Paused',
    });
    expect(
      parseEventLine(
        "2026-11-29 00:44:02.767+0000: event 'lifecycle' for domain 'vdi-a': Shutdown Finished after guest request",
      ),
    ).toMatchObject({ event: 'Shutdown', detail: 'Finished after guest request' });
    expect(parseEventLine("event 'reboot' for domain 'vdi-b'")).toEqual({
      type: 'reboot',
      domain: 'vdi-b',
      event: '',
      detail: '',
    });
    expect(parseEventLine('events received: 3')).toBeUndefined();
  });

  it('quotes only what virsh needs, and refuses what could break out of a command', () => {
    expect(quoteArg('/data/run/d1/domain.xml')).toBe('/data/run/d1/domain.xml');
    expect(quoteArg('a b')).toBe("'a b'");
    expect(() => quoteArg("a'b")).toThrow(/unsupported character/);
    expect(() => quoteArg('a\nquit')).toThrow(/unsupported character/);
  });

  it('turns a binary PPM screendump into a PNG', () => {
    const pixels = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9]);
    const ppm = Buffer.concat([Buffer.from('P6\n# qemu\n2 2\n255\n'), pixels]);
    const png = ppmToPng(ppm);
    expect(png).toEqual(encodePng(2, 2, pixels));
    expect(decodePng(png)).toMatchObject({ width: 2, height: 2 });
    expect(() => ppmToPng(Buffer.from('P3\n1 1\n255\n0 0 0'))).toThrow(/P6/);
    expect(() => ppmToPng(Buffer.from('P6\n2 2\n255\nxx'))).toThrow(/truncated/);
  });
});
