// The temp dir of a test run in memory: a directory of its own under /dev/shm (a tmpfs), made the
// TMPDIR of everything the run starts, and removed when the run ends. The run writes and removes
// thousands of files there (databases copied from templates, disk images, browser profiles, the
// portals' data, the embedded database that flushes each commit to its files). On this machine's
// disk, an ext4 mounted with `discard`, the journal, those flushes and the TRIM of each removed
// file cost the end-to-end tests alone 15 CPU-seconds and 7 s in one A/B pair (system time 83 ->
// 74 CPU-s); whole runs went from 513-530 s to 449-477 s. Used only when the tmpfs is executable
// and has room, and when the caller has not chosen a TMPDIR.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

const SHM = '/dev/shm';
const PREFIX = 'vdi-test-';
/** Room the run's files take at most: the clusters' databases, disks, caches and portals' data. */
const ROOM_BYTES = 4 * 1024 ** 3;
/** Memory left for the guests, browsers and servers of the run beside those files. */
const MEMORY_BYTES = 8 * 1024 ** 3;

/** The kernel's magic number of a tmpfs file system (statfs f_type). */
const TMPFS_MAGIC = 0x01021994;

/** Whether `dir` is on a tmpfs (in memory). */
export function onTmpfs(dir) {
  try {
    return statfsSync(dir).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
}

/** Whether /dev/shm is a tmpfs that lets files be executed (scripts the tests write run there). */
function executableTmpfs() {
  const mount = readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .findLast((fields) => fields[1] === SHM);
  return mount?.[2] === 'tmpfs' && !(mount[3] ?? '').split(',').includes('noexec');
}

function availableMemory() {
  const match = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** /dev/shm when the machine lets a test run keep its files there, else undefined. */
export function memoryParent() {
  try {
    if (!executableTmpfs()) return undefined;
    const fs = statfsSync(SHM);
    return fs.bavail * fs.bsize >= ROOM_BYTES && availableMemory() >= MEMORY_BYTES
      ? SHM
      : undefined;
  } catch {
    return undefined;
  }
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err?.code === 'EPERM';
  }
};

/**
 * Makes TMPDIR a new directory in memory for this process and its children, when the machine
 * allows it (memoryParent); answers the function that removes it (a no-op otherwise). A directory
 * left by a run that was killed (its process gone) is removed first.
 */
export function useMemoryTmpdir() {
  const parent = process.env.TMPDIR ? undefined : memoryParent();
  if (!parent) return () => undefined;
  let dir;
  try {
    for (const name of readdirSync(parent)) {
      const pid = Number(/^vdi-test-(\d+)-/.exec(name)?.[1]);
      if (pid && !alive(pid)) rmSync(join(parent, name), { recursive: true, force: true });
    }
    dir = mkdtempSync(join(parent, `${PREFIX}${process.pid}-`));
    // As /tmp: the services the tests start as other users (PostgreSQL, a libvirt host's QEMU)
    // make and read their files in it too.
    chmodSync(dir, 0o1777);
  } catch {
    // The temp dir on disk, as without a tmpfs.
    return () => undefined;
  }
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
