/**
 * Sizes of disk files as `qemu-img info` reports them, read through the hypervisor driver and
 * remembered per file: a file whose inode, length, modification and change times are those of
 * the last reading is not read again (a stat costs microseconds, a `qemu-img info` milliseconds),
 * and at most a few readings run at once, so listing a user's many disks stays fast and never
 * floods the host with processes. A disk kept as a volume of a hypervisor host's storage pool is
 * read from its host each time (one libvirt call).
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DiskInfo, Hypervisor } from '../../platform/hypervisor/types.ts';

/** `qemu-img info` processes running at once. */
export const DISK_INFO_CONCURRENCY = 4;
/** Files remembered; beyond this the oldest readings are dropped. */
const MAX_ENTRIES = 20_000;

/** A disk's sizes (bytes) and backing file, with the file's last modification. */
export interface DiskSizes extends DiskInfo {
  modifiedAt: Date;
}

export interface DiskSizeReader {
  /** The sizes of a disk (file or host volume); undefined when it does not exist. */
  read(path: string): Promise<DiskSizes | undefined>;
  /** Drops what is remembered about a file (after the server changed it). */
  forget(path: string): void;
}

interface Entry {
  signature: string;
  sizes: DiskSizes;
}

/** A reader on the driver `driverOf()` answers at the time of each reading. */
export function createDiskSizeReader(driverOf: () => Hypervisor): DiskSizeReader {
  const known = new Map<string, Entry>();
  let running = 0;
  const waiting: (() => void)[] = [];

  const limited = async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= DISK_INFO_CONCURRENCY) await new Promise<void>((go) => waiting.push(go));
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };

  return {
    async read(path) {
      const file = resolve(path);
      const st = await stat(file).catch(() => undefined);
      if (!st?.isFile()) {
        known.delete(file);
        // A volume of a hypervisor host's storage pool has no file here: read from its host.
        const info = await limited(() => driverOf().diskInfo(file)).catch(() => undefined);
        return info ? { ...info, modifiedAt: new Date() } : undefined;
      }
      const signature = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      const hit = known.get(file);
      if (hit?.signature === signature) return hit.sizes;
      const info = await limited(() => driverOf().diskInfo(file)).catch(() => undefined);
      if (!info) return undefined;
      const sizes: DiskSizes = { ...info, modifiedAt: st.mtime };
      if (known.size >= MAX_ENTRIES) {
        const oldest = known.keys().next().value;
        if (oldest !== undefined) known.delete(oldest);
      }
      known.delete(file);
      known.set(file, { signature, sizes });
      return sizes;
    },
    forget(path) {
      known.delete(resolve(path));
    },
  };
}
