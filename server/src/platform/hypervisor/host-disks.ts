/**
 * The disk operations of the hosts' registry (`host-drivers.ts`), routed by disk path: a path that
 * names a libvirt host's volume (`host-volumes.ts`) is a call to that host's storage pool, any
 * other path a file of the portal (the local driver's `qemu-img`, the file given to `diskOwner`).
 * Also the copies a start or a move needs: a desktop's disk into the pool of the host it starts
 * on, or from one host's pool to another's; and a template made from a desktop whose disk is a
 * volume: the volume downloaded into the template store, then flattened there.
 */
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { giveDiskTo, type DiskOperations } from './disk-images.ts';
import type { LibvirtPool } from './libvirt-pool.ts';
import {
  diskToPool,
  hostDiskDir,
  mediaToPool,
  mediaVolume,
  templateVolume,
  volumeBetweenPools,
  volumeChainToFiles,
  volumeHostOf,
  volumeToFile,
  type OnPercent,
} from './host-volumes.ts';
import {
  HypervisorError,
  type ConvertDiskOptions,
  type DiskInfo,
  type Hypervisor,
  type PrepareDiskOptions,
} from './types.ts';

export interface HostDisksOptions {
  /** The portal's files (the local driver's disk operations). */
  local: DiskOperations;
  /** DATA_DIR: volumes are named below it; unset: every disk is a portal file. */
  dataDir?: string | undefined;
  /** Default `qemu-img`. */
  qemuImg?: string | undefined;
  diskOwner?: { uid: number; gid: number } | undefined;
  /** The driver of a host (undefined: not known). */
  driverOf(hostId: string): Hypervisor | undefined;
}

const GiB = 1024 ** 3;

export class HostDisks {
  constructor(private readonly options: HostDisksOptions) {}

  private get local(): DiskOperations {
    return this.options.local;
  }

  /** The host whose volume `file` names, or null (a portal file). */
  hostOfDisk(file: string): string | null {
    return this.options.dataDir ? volumeHostOf(this.options.dataDir, file) : null;
  }

  /** The pool of a host with one; rejects for a host without. */
  private poolOf(hostId: string): LibvirtPool {
    const pool = this.options.driverOf(hostId)?.volumes;
    if (!pool)
      throw new HypervisorError(
        'disk_not_found',
        `the hypervisor host ${hostId} has no storage pool`,
      );
    return pool;
  }

  /** The pool and volume `file` names, or undefined for a portal file. */
  private volumeOf(file: string): { pool: LibvirtPool; volume: string } | undefined {
    const host = this.hostOfDisk(file);
    return host ? { pool: this.poolOf(host), volume: path.basename(file) } : undefined;
  }

  private portal(onPercent?: OnPercent) {
    return {
      info: (file: string) => this.local.diskInfo(file),
      qemuImg: this.options.qemuImg ?? 'qemu-img',
      onPercent,
    };
  }

  async prepareDisk(opts: PrepareDiskOptions): Promise<DiskInfo> {
    const vol = this.volumeOf(opts.path);
    if (!vol) {
      const info = await this.local.prepareDisk(opts);
      await giveDiskTo(opts.path, this.options.diskOwner);
      return info;
    }
    if (await vol.pool.exists(vol.volume))
      throw new HypervisorError('disk_exists', `volume ${vol.volume} already exists`);
    const bytes = opts.sizeGiB === undefined ? undefined : Math.round(opts.sizeGiB * GiB);
    if (!opts.backingFile) {
      if (bytes === undefined)
        throw new HypervisorError('invalid_spec', 'prepareDisk needs backingFile or sizeGiB');
      return vol.pool.create(vol.volume, bytes);
    }
    // The template's chain first (what the pool lacks), then the overlay made on the host.
    const template = templateVolume(opts.backingFile);
    if (!(await vol.pool.exists(template)))
      await diskToPool({ ...this.portal(), pool: vol.pool }, opts.backingFile, template);
    const size = bytes ?? (await this.local.diskInfo(opts.backingFile)).virtualSize;
    return vol.pool.create(vol.volume, size, template);
  }

  async deleteDisk(file: string): Promise<void> {
    const vol = this.volumeOf(file);
    return vol ? vol.pool.remove(vol.volume) : this.local.deleteDisk(file);
  }

  async diskInfo(file: string): Promise<DiskInfo> {
    const vol = this.volumeOf(file);
    return vol ? vol.pool.info(vol.volume) : this.local.diskInfo(file);
  }

  async resizeDisk(file: string, sizeGiB: number): Promise<DiskInfo> {
    const vol = this.volumeOf(file);
    if (!vol) return this.local.resizeDisk(file, sizeGiB);
    if (!(sizeGiB > 0) || sizeGiB > 65536)
      throw new HypervisorError('invalid_spec', `sizeGiB must be in (0, 65536] (got ${sizeGiB})`);
    return vol.pool.resize(vol.volume, Math.round(sizeGiB * GiB));
  }

  async convertDisk(opts: ConvertDiskOptions): Promise<DiskInfo> {
    const vol = this.volumeOf(opts.source);
    const info = vol
      ? await this.convertVolume(vol.pool, vol.volume, opts)
      : await this.local.convertDisk(opts);
    await giveDiskTo(opts.target, this.options.diskOwner);
    return info;
  }

  /**
   * A volume flattened into a portal file: its chain downloaded next to the target (up to a
   * template the target's directory keeps; the first half of the progress), then flattened there
   * as a portal file is (the second half), the downloads removed.
   */
  private async convertVolume(
    pool: LibvirtPool,
    volume: string,
    opts: ConvertDiskOptions,
  ): Promise<DiskInfo> {
    if (existsSync(opts.target))
      throw new HypervisorError('disk_exists', `disk already exists: ${opts.target}`);
    const report = opts.onProgress;
    const files = await volumeChainToFiles(
      pool,
      volume,
      opts.target,
      path.dirname(opts.target),
      report && ((percent) => report(percent / 2)),
      opts.signal,
    );
    try {
      return await this.local.convertDisk({
        ...opts,
        source: files[0] ?? '',
        ...(report ? { onProgress: (percent: number) => report(50 + percent / 2) } : {}),
      });
    } finally {
      await Promise.all(files.map((file) => fsp.rm(file, { force: true })));
    }
  }

  /**
   * The disk path a start on `hostId` uses for `file`: a portal file goes into the pool of a libvirt
   * host first (its template's chain copied there when the pool lacks it; `onPercent` hears the
   * progress); a volume must be the host's own. Answers the new path (the portal's file stays: the
   * caller removes it once the new path is recorded).
   */
  async stageDisk(hostId: string, file: string, onPercent?: OnPercent): Promise<string> {
    const home = this.hostOfDisk(file);
    const pool = this.options.driverOf(hostId)?.volumes;
    if (home === hostId || (!home && !pool)) return file;
    if (home || !pool || !this.options.dataDir)
      throw new HypervisorError(
        'start_failed',
        `the disk of the desktop is on the hypervisor host ${home ?? 'local'}, not on ${hostId}: move the desktop there`,
      );
    const volume = path.basename(file);
    await diskToPool({ ...this.portal(onPercent), pool }, file, volume);
    return path.join(hostDiskDir(this.options.dataDir, hostId), volume);
  }

  /**
   * The paths a start on `hostId` uses for its media files (ISOs, floppy images): on a libvirt
   * host, the volumes of its pool they were uploaded to (once per host; `onPercent` hears the
   * uploads' progress), named like its disks; elsewhere the files themselves.
   */
  async stageMedia(hostId: string, files: string[], onPercent?: OnPercent): Promise<string[]> {
    const pool = this.options.driverOf(hostId)?.volumes;
    const dataDir = this.options.dataDir;
    if (!pool || !dataDir || files.length === 0) return files;
    for (const file of files)
      if (!existsSync(file)) throw new HypervisorError('invalid_spec', `file not found: ${file}`);
    await mediaToPool(pool, files, onPercent);
    return files.map((file) => path.join(hostDiskDir(dataDir, hostId), mediaVolume(file)));
  }

  /**
   * Copies a disk to another host (see `stageDisk`; between two hosts' pools a download streamed
   * into an upload; to the host local a portal file whose backing file is `templateFile`) and
   * answers its new path there. The source stays.
   */
  async copyDisk(
    file: string,
    hostId: string,
    templateFile: string | null,
    onPercent?: OnPercent,
  ): Promise<string> {
    const dataDir = this.options.dataDir;
    if (!dataDir) throw new HypervisorError('command_failed', 'disks are not named per host');
    const volume = path.basename(file);
    const target = path.join(hostDiskDir(dataDir, hostId), volume);
    const home = this.hostOfDisk(file);
    if (path.resolve(target) === path.resolve(file)) return target;
    const to = this.options.driverOf(hostId)?.volumes;
    if (!home && !to) {
      throw new HypervisorError('command_failed', `${hostId} keeps no disks of its own`);
    } else if (!home && to) {
      await diskToPool({ ...this.portal(onPercent), pool: to }, file, volume);
    } else if (home && to) {
      await volumeBetweenPools(this.poolOf(home), to, volume, onPercent);
    } else if (home) {
      await volumeToFile(this.poolOf(home), volume, target, templateFile, onPercent);
      await giveDiskTo(target, this.options.diskOwner);
    }
    return target;
  }
}
