/**
 * The Tiny Linux build cache kept small: each data dir whose portal key is its own adds a built
 * disk to the machine's cache (tiny-linux.ts), and a new guest recipe a new initramfs.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

/** Built files the cache keeps of each kind (disks, initramfs), the latest used first. */
export const TINY_LINUX_CACHE_KEEP = { disks: 16, initramfs: 2 };
/** A cache file used this recently is never removed (another process may be copying it). */
const CACHE_GRACE_MS = 60 * 60 * 1000;

/**
 * Removes the cache's older builds: every data dir with a key of its own adds a disk (about
 * 20 MB), and a new guest recipe a new initramfs. The latest used of each kind stay, and any
 * used within the last hour.
 */
export async function pruneTinyLinuxCache(
  cacheDir: string,
  keep = TINY_LINUX_CACHE_KEEP,
): Promise<void> {
  const names = await fsp.readdir(cacheDir).catch(() => [] as string[]);
  const kinds = [
    { suffix: '.qcow2', keep: keep.disks },
    { suffix: '.initrd.gz', keep: keep.initramfs },
  ];
  for (const kind of kinds) {
    const files = await Promise.all(
      names
        .filter((name) => name.endsWith(kind.suffix))
        .map(async (name) => {
          const file = path.join(cacheDir, name);
          const stat = await fsp.stat(file).catch(() => undefined);
          return { file, used: stat?.mtimeMs ?? 0 };
        }),
    );
    const old = files
      .sort((a, b) => b.used - a.used)
      .slice(kind.keep)
      .filter(({ used }) => used < Date.now() - CACHE_GRACE_MS);
    await Promise.all(old.map(({ file }) => fsp.rm(file, { force: true })));
  }
}
