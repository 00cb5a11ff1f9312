import { describe, expect, it } from 'vitest';
import {
  bootOrderLetters,
  buildQemuArgs,
  escapeOptionValue,
  type QemuLaunchContext,
} from './qemu-command.ts';
import { HypervisorError, type DomainSpec } from './types.ts';
import { demoSpec } from './test-support.ts';

const ctx: QemuLaunchContext = {
  accel: 'tcg',
  vncPort: 5903,
  spicePort: 15904,
  qmpPath: '/data/run/d1/qmp.sock',
  pidPath: '/data/run/d1/qemu.pid',
};

function spec(
  hw: Partial<DomainSpec['hardware']> = {},
  extra: Partial<DomainSpec> = {},
): DomainSpec {
  return { ...demoSpec('d1', '/data/disks/d1.qcow2', hw), ...extra };
}

/** The guest's random number generator: QEMU's own source, read at most 1 KiB a second. */
const RNG_DEVICE = 'virtio-rng-pci,rng=rng0,max-bytes=1024,period=1000';

/** Values that follow `flag` in `args`. */
function values(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1] ?? ''] : []));
}

describe('buildQemuArgs', () => {
  it('sets memory, vcpus, accel and the safety defaults', () => {
    const args = buildQemuArgs(spec({ vcpus: 2, memoryMiB: 512 }), ctx);
    expect(values(args, '-m')).toEqual(['512']);
    expect(values(args, '-smp')).toEqual(['2']);
    expect(values(args, '-accel')).toEqual(['tcg']);
    expect(args).toContain('-nodefaults');
    expect(args).toContain('-S');
    expect(values(args, '-nic')).toEqual(['none']);
    expect(values(args, '-display')).toEqual(['none']);
    expect(values(args, '-vnc')).toEqual(['127.0.0.1:3,password=on']);
    expect(values(args, '-spice')).toEqual(['port=15904,addr=127.0.0.1']);
    expect(values(args, '-qmp')).toEqual(['unix:/data/run/d1/qmp.sock,server=on,wait=off']);
    expect(values(args, '-pidfile')).toEqual(['/data/run/d1/qemu.pid']);
    expect(values(args, '-cpu')).toEqual([]);
    // a virtio random number generator fed by QEMU, read at most 1 KiB a second
    expect(values(args, '-object')).toEqual(['rng-builtin,id=rng0']);
    expect(values(args, '-device')).toContain(RNG_DEVICE);
    // passwords never reach the command line
    expect(args.join(' ')).not.toContain('vncpass1');
    expect(args.join(' ')).not.toContain('spicepass');
  });

  it('takes the passwords from files QEMU reads at launch, the guest then running at once', () => {
    const passwordFiles = { vnc: '/data/run/d1/vnc.secret', spice: '/data/run/d1/spice.secret' };
    const args = buildQemuArgs(spec(), { ...ctx, passwordFiles, startPaused: false });
    expect(values(args, '-object')).toEqual([
      'rng-builtin,id=rng0',
      'secret,id=vnc-password,file=/data/run/d1/vnc.secret',
      'secret,id=spice-password,file=/data/run/d1/spice.secret',
    ]);
    expect(values(args, '-vnc')).toEqual(['127.0.0.1:3,password-secret=vnc-password']);
    expect(values(args, '-spice')).toEqual([
      'port=15904,addr=127.0.0.1,password-secret=spice-password',
    ]);
    expect(args).not.toContain('-S');
    expect(args.join(' ')).not.toContain('vncpass1');
    expect(args.join(' ')).not.toContain('spicepass');
  });

  it('makes the SPICE port TLS-only with the certificates directory when given one', () => {
    const args = buildQemuArgs(spec(), { ...ctx, spiceX509Dir: '/data/pki/spi,ce' });
    expect(values(args, '-spice')).toEqual([
      'tls-port=15904,addr=127.0.0.1,x509-dir=/data/pki/spi,,ce',
    ]);
  });

  it('uses -cpu host with kvm', () => {
    const args = buildQemuArgs(spec(), { ...ctx, accel: 'kvm' });
    expect(values(args, '-accel')).toEqual(['kvm']);
    expect(values(args, '-cpu')).toEqual(['host']);
  });

  it('maps the boot order to c/d/a/n letters', () => {
    expect(bootOrderLetters(['iso', 'disk', 'floppy', 'pxe'])).toBe('dcan');
    expect(bootOrderLetters(['disk', 'disk', 'iso'])).toBe('cd');
    expect(values(buildQemuArgs(spec({ bootOrder: ['floppy', 'iso'] }), ctx), '-boot')).toEqual([
      'order=ad',
    ]);
    expect(values(buildQemuArgs(spec({ bootOrder: [] }), ctx), '-boot')).toEqual([]);
  });

  it('attaches the disk on virtio, ide or an AHCI controller', () => {
    expect(values(buildQemuArgs(spec({ diskBus: 'virtio' }), ctx), '-drive')).toEqual([
      'file=/data/disks/d1.qcow2,format=qcow2,if=virtio,index=0,media=disk',
    ]);
    expect(values(buildQemuArgs(spec({ diskBus: 'ide' }), ctx), '-drive')).toEqual([
      'file=/data/disks/d1.qcow2,format=qcow2,if=ide,index=0,media=disk',
    ]);
    const sata = buildQemuArgs(spec({ diskBus: 'sata' }), ctx);
    expect(values(sata, '-drive')).toEqual([
      'file=/data/disks/d1.qcow2,format=qcow2,if=none,id=disk0',
    ]);
    expect(values(sata, '-device')).toEqual([
      'ich9-ahci,id=ahci0',
      'ide-hd,drive=disk0,bus=ahci0.0',
      RNG_DEVICE,
      'VGA',
    ]);
  });

  it('attaches ISOs read-only as CD-ROMs after an IDE disk, floppies read-only', () => {
    const isos = ['/m/a.iso', '/m/b.iso'];
    const virtio = values(buildQemuArgs(spec({ isos, floppies: ['/m/f.img'] }), ctx), '-drive');
    expect(virtio.slice(1)).toEqual([
      'file=/m/a.iso,format=raw,if=ide,index=0,media=cdrom,readonly=on',
      'file=/m/b.iso,format=raw,if=ide,index=1,media=cdrom,readonly=on',
      'file=/m/f.img,format=raw,if=floppy,index=0,readonly=on',
    ]);
    const ide = values(buildQemuArgs(spec({ diskBus: 'ide', isos }), ctx), '-drive');
    expect(ide[1]).toContain('index=1,media=cdrom');
    expect(ide[2]).toContain('index=2,media=cdrom');
  });

  it('handles video models', () => {
    expect(values(buildQemuArgs(spec({ video: 'none' }), ctx), '-vga')).toEqual(['none']);
    expect(values(buildQemuArgs(spec({ video: 'none' }), ctx), '-device')).toEqual([RNG_DEVICE]);
    expect(values(buildQemuArgs(spec({ video: 'virtio' }), ctx), '-device')).toEqual([
      RNG_DEVICE,
      'virtio-vga',
    ]);
    expect(values(buildQemuArgs(spec({ video: 'default' }), ctx), '-device')).toEqual([
      RNG_DEVICE,
      'VGA',
    ]);
    expect(values(buildQemuArgs(spec({ video: 'vga' }), ctx), '-device')).toEqual([
      RNG_DEVICE,
      'VGA',
    ]);
  });

  it('escapes commas in paths and names', () => {
    expect(escapeOptionValue('a,b')).toBe('a,,b');
    const args = buildQemuArgs(
      spec({ isos: ['/m/x,y.iso'] }, { name: 'Lab, room 2', diskPath: '/d/a,b.qcow2' }),
      ctx,
    );
    expect(values(args, '-drive')[0]).toBe(
      'file=/d/a,,b.qcow2,format=qcow2,if=virtio,index=0,media=disk',
    );
    expect(values(args, '-drive')[1]).toContain('file=/m/x,,y.iso,');
    expect(values(args, '-name')[0]).toBe('guest=Lab,, room 2,process=qemu-d1');
  });

  it('supports a diskless domain booting an ISO', () => {
    const args = buildQemuArgs(
      spec({ isos: ['/m/a.iso'], bootOrder: ['iso'] }, { diskPath: '' }),
      ctx,
    );
    expect(values(args, '-drive')).toEqual([
      'file=/m/a.iso,format=raw,if=ide,index=0,media=cdrom,readonly=on',
    ]);
    expect(values(args, '-boot')).toEqual(['order=d']);
  });

  it('rejects invalid specs', () => {
    const bad: [Partial<DomainSpec['hardware']>, Partial<DomainSpec>][] = [
      [{ vcpus: 0 }, {}],
      [{ memoryMiB: 1.5 }, {}],
      [{ isos: ['/1', '/2', '/3', '/4', '/5'] }, {}],
      [{ diskBus: 'ide', isos: ['/1', '/2', '/3', '/4'] }, {}],
      [{ floppies: ['/1', '/2', '/3'] }, {}],
      [{ isos: ['relative.iso'] }, {}],
      [{}, { id: '../etc' }],
      [{}, { id: '..' }],
      [{}, { vncPassword: '' }],
      [{}, { spicePassword: '' }],
    ];
    for (const [hw, extra] of bad) {
      expect(() => buildQemuArgs(spec(hw, extra), ctx)).toThrow(HypervisorError);
    }
    expect(() => buildQemuArgs(spec(), { ...ctx, vncPort: 5000 })).toThrow(/VNC port/);
  });
});
