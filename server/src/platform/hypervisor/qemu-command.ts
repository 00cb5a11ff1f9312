/**
 * Pure builder of the `qemu-system-x86_64` command line (no I/O), plus the spec validation.
 * Unit-tested in `qemu-command.test.ts`.
 */
import path from 'node:path';
import {
  DOMAIN_ID_PATTERN,
  HypervisorError,
  type Accel,
  type BootDevice,
  type DomainSpec,
} from './types.ts';
import { nicArgs } from './qemu-network.ts';

/** Where and how one start listens; chosen by the driver. */
export interface QemuLaunchContext {
  accel: Accel;
  /** VNC TCP port (>= 5900: QEMU takes a display number = port - 5900). */
  vncPort: number;
  spicePort: number;
  /**
   * The SPICE certificates (`x509-dir`). When given, `spicePort` is a TLS-only listener and every
   * channel is encrypted; without it the listener is plain.
   */
  spiceX509Dir?: string;
  /** QMP unix socket path. */
  qmpPath: string;
  /** Pid file path. */
  pidPath: string;
  /**
   * Files holding the start's VNC and SPICE passwords, read by QEMU at launch (`-object secret`):
   * the consoles ask for them from the first connection, so the guest may run at once. Without
   * them VNC and SPICE admit nobody until the passwords are set over QMP.
   */
  passwordFiles?: { vnc: string; spice: string };
  /** Start with the vCPUs stopped (`-S`) until `cont` (passwords set over QMP first). Default true. */
  startPaused?: boolean;
  /** Enable QEMU's seccomp sandbox. Default true. */
  sandbox?: boolean;
}

const BOOT_LETTER: Record<BootDevice, string> = { disk: 'c', iso: 'd', floppy: 'a', pxe: 'n' };
export const VNC_BASE_PORT = 5900;

/** QEMU option values: a comma must be doubled. */
export function escapeOptionValue(value: string): string {
  return value.replaceAll(',', ',,');
}

/** The `-boot order=` letters for a boot order (duplicates dropped), e.g. `['iso','disk']` -> `dc`. */
export function bootOrderLetters(order: readonly BootDevice[]): string {
  return [...new Set(order.map((d) => BOOT_LETTER[d]))].join('');
}

/** Throws HypervisorError('invalid_spec') when the spec cannot be started. */
export function validateSpec(spec: DomainSpec): void {
  const fail = (msg: string): never => {
    throw new HypervisorError('invalid_spec', msg);
  };
  if (!DOMAIN_ID_PATTERN.test(spec.id)) fail(`invalid domain id ${JSON.stringify(spec.id)}`);
  const hw = spec.hardware;
  if (!Number.isInteger(hw.vcpus) || hw.vcpus < 1 || hw.vcpus > 64)
    fail(`vcpus must be an integer 1..64 (got ${hw.vcpus})`);
  if (!Number.isInteger(hw.memoryMiB) || hw.memoryMiB < 16 || hw.memoryMiB > 1_048_576)
    fail(`memoryMiB must be an integer 16..1048576 (got ${hw.memoryMiB})`);
  if (!['virtio', 'ide', 'sata'].includes(hw.diskBus))
    fail(`unknown disk bus ${String(hw.diskBus)}`);
  if (!['default', 'vga', 'virtio', 'none'].includes(hw.video))
    fail(`unknown video ${String(hw.video)}`);
  for (const d of hw.bootOrder) if (!(d in BOOT_LETTER)) fail(`unknown boot device ${String(d)}`);
  const cdSlots = hw.diskBus === 'ide' && spec.diskPath ? 3 : 4;
  if (hw.isos.length > cdSlots)
    fail(`at most ${cdSlots} ISOs with disk bus ${hw.diskBus} (got ${hw.isos.length})`);
  if (hw.floppies.length > 2) fail(`at most 2 floppies (got ${hw.floppies.length})`);
  for (const file of [spec.diskPath, ...hw.isos, ...hw.floppies]) {
    if (file && !path.isAbsolute(file)) fail(`paths must be absolute: ${file}`);
  }
  if (!spec.vncPassword) fail('vncPassword is required');
  if (!spec.spicePassword) fail('spicePassword is required');
}

/** Printable name for `-name` (no control characters, at most 100 chars). */
function cleanName(name: string): string {
  const cleaned = name
    .replace(/\p{Cc}/gu, ' ')
    .trim()
    .slice(0, 100);
  return cleaned || 'desktop';
}

/** The guest's random number generator: its object id, and how much it may read per period. */
const RNG_ID = 'rng0';
export const RNG_BYTES_PER_PERIOD = 1024;
export const RNG_PERIOD_MS = 1000;

/** The ids of the secret objects that carry the passwords (`passwordFiles`). */
const VNC_SECRET = 'vnc-password';
const SPICE_SECRET = 'spice-password';

/**
 * Build the argument vector (without the binary) for one start.
 * Passwords are never on the command line: QEMU reads them from `passwordFiles`, or VNC starts with
 * `password=on` (no password = nobody can log in) and SPICE with ticketing enabled but no ticket
 * (nobody can log in) until the driver sets both over QMP.
 */
export function buildQemuArgs(spec: DomainSpec, ctx: QemuLaunchContext): string[] {
  validateSpec(spec);
  if (ctx.vncPort < VNC_BASE_PORT)
    throw new HypervisorError('invalid_spec', `VNC port must be >= ${VNC_BASE_PORT}`);
  const hw = spec.hardware;
  const e = escapeOptionValue;
  const args: string[] = [
    '-nodefaults',
    '-no-user-config',
    '-name',
    `guest=${e(cleanName(spec.name))},process=qemu-${e(spec.id.slice(0, 10))}`,
    '-machine',
    'pc',
    '-accel',
    ctx.accel,
  ];
  if (ctx.accel === 'kvm') args.push('-cpu', 'host');
  args.push('-m', String(hw.memoryMiB), '-smp', String(hw.vcpus));
  if (hw.bootOrder.length > 0) args.push('-boot', `order=${bootOrderLetters(hw.bootOrder)}`);

  // main disk
  if (spec.diskPath) {
    const file = `file=${e(spec.diskPath)},format=qcow2`;
    if (hw.diskBus === 'virtio') {
      args.push('-drive', `${file},if=virtio,index=0,media=disk`);
    } else if (hw.diskBus === 'ide') {
      args.push('-drive', `${file},if=ide,index=0,media=disk`);
    } else {
      args.push(
        '-device',
        'ich9-ahci,id=ahci0',
        '-drive',
        `${file},if=none,id=disk0`,
        '-device',
        'ide-hd,drive=disk0,bus=ahci0.0',
      );
    }
  }
  // CD-ROMs on the built-in IDE controller (after the disk when the disk is IDE)
  const firstCd = hw.diskBus === 'ide' && spec.diskPath ? 1 : 0;
  hw.isos.forEach((iso, i) => {
    args.push(
      '-drive',
      `file=${e(iso)},format=raw,if=ide,index=${firstCd + i},media=cdrom,readonly=on`,
    );
  });
  hw.floppies.forEach((img, i) => {
    args.push('-drive', `file=${e(img)},format=raw,if=floppy,index=${i},readonly=on`);
  });

  // A hardware random number generator (QEMU's own source, at most 1 KiB a second per guest):
  // without one a guest that asks for random bytes early in its boot (SSH host keys, TLS) waits
  // for the kernel to gather entropy from its own timing, a busy loop that cost the Tiny Linux
  // guest nearly one of its 4.5 CPU-seconds of boot under TCG.
  args.push(
    '-object',
    `rng-builtin,id=${RNG_ID}`,
    '-device',
    `virtio-rng-pci,rng=${RNG_ID},max-bytes=${RNG_BYTES_PER_PERIOD},period=${RNG_PERIOD_MS}`,
  );

  // video + consoles
  if (hw.video === 'none') args.push('-vga', 'none');
  else if (hw.video === 'virtio') args.push('-device', 'virtio-vga');
  else args.push('-device', 'VGA');
  const files = ctx.passwordFiles;
  if (files)
    args.push(
      '-object',
      `secret,id=${VNC_SECRET},file=${e(files.vnc)}`,
      '-object',
      `secret,id=${SPICE_SECRET},file=${e(files.spice)}`,
    );
  const spice = ctx.spiceX509Dir
    ? `tls-port=${ctx.spicePort},addr=127.0.0.1,x509-dir=${e(ctx.spiceX509Dir)}`
    : `port=${ctx.spicePort},addr=127.0.0.1`;
  args.push(
    '-display',
    'none',
    '-vnc',
    `127.0.0.1:${ctx.vncPort - VNC_BASE_PORT},${files ? `password-secret=${VNC_SECRET}` : 'password=on'}`,
    '-spice',
    files ? `${spice},password-secret=${SPICE_SECRET}` : spice,
    ...nicArgs(spec.network ?? []),
    '-qmp',
    `unix:${e(ctx.qmpPath)},server=on,wait=off`,
    '-pidfile',
    ctx.pidPath,
    '-msg',
    'timestamp=on',
  );
  if (ctx.sandbox ?? true)
    args.push(
      '-sandbox',
      'on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny',
    );
  if (ctx.startPaused ?? true) args.push('-S');
  return args;
}
