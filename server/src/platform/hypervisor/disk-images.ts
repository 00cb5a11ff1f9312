/**
 * Disk images through `qemu-img`: a blank qcow2 or an overlay on a template (written in-process,
 * ./qcow2-create.ts), its info (a qcow2's read from its header, ./qcow2-info.ts), growing it,
 * flattening it into a standalone copy, deleting it. Any driver whose guests run on qcow2 files uses it; the driver tells which files
 * its running domains hold, and those are never resized, read for a copy or deleted.
 */
import { spawn, execFile } from 'node:child_process';
import { promises as fsp, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { errorMessage, isRecord } from './host-process.ts';
import { writeEmptyQcow2, type NewQcow2 } from './qcow2-create.ts';
import { qcow2Info } from './qcow2-info.ts';
import {
  HypervisorError,
  type ConvertDiskOptions,
  type DiskInfo,
  type Hypervisor,
  type PrepareDiskOptions,
} from './types.ts';

const execFileAsync = promisify(execFile);
const MIB = 1024 * 1024;

/** The disk operations of a {@link Hypervisor}. */
export type DiskOperations = Pick<
  Hypervisor,
  'prepareDisk' | 'deleteDisk' | 'diskInfo' | 'resizeDisk' | 'convertDisk'
>;

export class DiskImages implements DiskOperations {
  /**
   * @param qemuImg the `qemu-img` binary
   * @param inUse whether a running domain holds this (absolute) disk file
   */
  constructor(
    private readonly qemuImg: string,
    private readonly inUse: (file: string) => boolean,
  ) {}

  private async run(args: string[]): Promise<string> {
    try {
      const { stdout } = await execFileAsync(this.qemuImg, args, { maxBuffer: 4 * 1024 * 1024 });
      return stdout;
    } catch (error) {
      const stderr = isRecord(error) && typeof error.stderr === 'string' ? error.stderr.trim() : '';
      throw new HypervisorError(
        'command_failed',
        `qemu-img ${args[0] ?? ''} failed: ${stderr || errorMessage(error)}`,
        { cause: error },
      );
    }
  }

  async prepareDisk(opts: PrepareDiskOptions): Promise<DiskInfo> {
    const file = path.resolve(opts.path);
    if (existsSync(file)) throw new HypervisorError('disk_exists', `disk ${file} already exists`);
    if (opts.sizeGiB !== undefined && (!(opts.sizeGiB > 0) || opts.sizeGiB > 65536)) {
      throw new HypervisorError(
        'invalid_spec',
        `sizeGiB must be in (0, 65536] (got ${opts.sizeGiB})`,
      );
    }
    const sizeMiB = opts.sizeGiB === undefined ? undefined : Math.round(opts.sizeGiB * 1024);
    await fsp.mkdir(path.dirname(file), { recursive: true });
    if (opts.backingFile) {
      const backing = path.resolve(opts.backingFile);
      if (!existsSync(backing))
        throw new HypervisorError('disk_not_found', `backing file ${backing} not found`);
      // Written here when the backing file's header reads as a qcow2 image; qemu-img otherwise,
      // which refuses what is not one.
      const base = await qcow2Info(backing).catch(() => null);
      const sizeBytes = sizeMiB === undefined ? base?.virtualSize : sizeMiB * MIB;
      if (base && sizeBytes) await this.writeEmpty(file, { sizeBytes, backing });
      else
        await this.run([
          'create',
          '-q',
          '-f',
          'qcow2',
          '-b',
          backing,
          '-F',
          'qcow2',
          file,
          ...(sizeMiB === undefined ? [] : [`${sizeMiB}M`]),
        ]);
    } else {
      if (sizeMiB === undefined)
        throw new HypervisorError('invalid_spec', 'prepareDisk needs backingFile or sizeGiB');
      await this.writeEmpty(file, { sizeBytes: sizeMiB * MIB });
    }
    return this.diskInfo(file);
  }

  private async writeEmpty(file: string, image: NewQcow2): Promise<void> {
    try {
      await writeEmptyQcow2(file, image);
    } catch (error) {
      throw new HypervisorError(
        isRecord(error) && error.code === 'EEXIST' ? 'disk_exists' : 'command_failed',
        `cannot write ${file}: ${errorMessage(error)}`,
        { cause: error },
      );
    }
  }

  async deleteDisk(file: string): Promise<void> {
    if (this.inUse(file))
      throw new HypervisorError('already_running', `disk ${file} is used by a running domain`);
    await fsp.rm(path.resolve(file), { force: true });
  }

  async diskInfo(file: string): Promise<DiskInfo> {
    const abs = path.resolve(file);
    if (!existsSync(abs)) throw new HypervisorError('disk_not_found', `disk ${abs} not found`);
    const fromHeader = await qcow2Info(abs).catch(() => null);
    if (fromHeader) return fromHeader;
    // -U: read even while a running QEMU holds the image lock
    const out = await this.run(['info', '--output=json', '-U', abs]);
    let info: unknown;
    try {
      info = JSON.parse(out);
    } catch (error) {
      throw new HypervisorError('command_failed', 'qemu-img info: output is not JSON', {
        cause: error,
      });
    }
    if (!isRecord(info))
      throw new HypervisorError('command_failed', 'qemu-img info: unexpected output');
    const backing = info['full-backing-filename'] ?? info['backing-filename'];
    return {
      virtualSize: typeof info['virtual-size'] === 'number' ? info['virtual-size'] : 0,
      actualSize: typeof info['actual-size'] === 'number' ? info['actual-size'] : 0,
      backingFile: typeof backing === 'string' ? backing : null,
    };
  }

  async resizeDisk(file: string, sizeGiB: number): Promise<DiskInfo> {
    const abs = path.resolve(file);
    if (!(sizeGiB > 0) || sizeGiB > 65536)
      throw new HypervisorError('invalid_spec', `sizeGiB must be in (0, 65536] (got ${sizeGiB})`);
    if (!existsSync(abs)) throw new HypervisorError('disk_not_found', `disk ${abs} not found`);
    if (this.inUse(abs))
      throw new HypervisorError('already_running', `disk ${abs} is used by a running domain`);
    await this.run(['resize', '-q', '-f', 'qcow2', abs, `${Math.round(sizeGiB * 1024)}M`]);
    return this.diskInfo(abs);
  }

  async convertDisk(opts: ConvertDiskOptions): Promise<DiskInfo> {
    const source = path.resolve(opts.source);
    const target = path.resolve(opts.target);
    if (!existsSync(source))
      throw new HypervisorError('disk_not_found', `disk ${source} not found`);
    if (existsSync(target))
      throw new HypervisorError('disk_exists', `disk ${target} already exists`);
    // A running guest writes its disk while qemu-img reads it: the copy would be inconsistent.
    if (this.inUse(source))
      throw new HypervisorError('already_running', `disk ${source} is used by a running domain`);
    const partial = `${target}.part`;
    await fsp.mkdir(path.dirname(target), { recursive: true });
    await fsp.rm(partial, { force: true });
    try {
      await this.runConvert(source, partial, opts);
      await fsp.rename(partial, target);
    } catch (error) {
      await fsp.rm(partial, { force: true });
      throw error;
    }
    return this.diskInfo(target);
  }

  /**
   * `qemu-img convert -p`: reads the source (and its backing chain, formats given, never probed)
   * into a standalone qcow2, reporting progress from qemu-img's "(n.nn/100%)" lines. It runs at a
   * lower CPU priority than the guests.
   */
  private runConvert(source: string, target: string, opts: ConvertDiskOptions): Promise<void> {
    const { onProgress, signal } = opts;
    if (signal?.aborted)
      return Promise.reject(new HypervisorError('command_failed', 'qemu-img convert aborted'));
    return new Promise<void>((resolve, reject) => {
      const args = ['convert', '-p', '-f', 'qcow2', '-O', 'qcow2', source, target];
      const child = spawn(this.qemuImg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      if (child.pid) {
        try {
          os.setPriority(child.pid, 10);
        } catch {
          /* not allowed here: it runs at the default priority */
        }
      }
      let stderr = '';
      let pending = '';
      let last = -1;
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        pending += chunk;
        const parts = pending.split(/[\r\n]/);
        pending = parts.pop() ?? '';
        for (const part of parts) {
          const match = /\((\d+(?:\.\d+)?)\/100%\)/.exec(part);
          const percent = match?.[1] ? Number(match[1]) : NaN;
          if (Number.isFinite(percent) && percent !== last) {
            last = percent;
            onProgress?.(percent);
          }
        }
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        if (stderr.length < 8192) stderr += chunk;
      });
      const abort = () => child.kill('SIGKILL');
      signal?.addEventListener('abort', abort, { once: true });
      child.once('error', (error) => {
        signal?.removeEventListener('abort', abort);
        reject(
          new HypervisorError('command_failed', `qemu-img convert failed: ${errorMessage(error)}`, {
            cause: error,
          }),
        );
      });
      child.once('close', (code, sig) => {
        signal?.removeEventListener('abort', abort);
        if (code === 0) return resolve();
        const why = signal?.aborted
          ? 'aborted'
          : stderr.trim() || (sig ? `killed by ${sig}` : `exit code ${String(code)}`);
        reject(new HypervisorError('command_failed', `qemu-img convert failed: ${why}`));
      });
    });
  }
}

/**
 * Gives a disk file to an owner (a session daemon's account), read-write for it and its group
 * (several hosts' accounts that share the group may run it); no owner: unchanged.
 */
export async function giveDiskTo(
  file: string,
  owner: { uid: number; gid: number } | undefined,
): Promise<void> {
  if (!owner) return;
  try {
    await fsp.chown(path.resolve(file), owner.uid, owner.gid);
    await fsp.chmod(path.resolve(file), 0o660);
  } catch (error) {
    throw new HypervisorError('command_failed', `cannot chown ${file}: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}
