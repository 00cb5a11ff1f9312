/**
 * A qcow2 image's info read from its header, without starting `qemu-img info`: the virtual size
 * (the header's size field), the allocated size (the file's blocks, what `qemu-img info` reports as
 * its actual size) and the backing file name. A desktop's creation, its start and every copy ask
 * for it, and a process per question cost more than the question. Anything this does not read with
 * certainty (not a qcow2, a header version other than 2 or 3, an external data file, a backing name
 * that is not an absolute path) answers null, and the caller asks qemu-img.
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import { backingNameOf } from './qcow2-backing.ts';
import type { DiskInfo } from './types.ts';

const MAGIC = 0x514649fb; // "QFI\xfb"
/** The version 3 header's fields this reads end at byte 80 (incompatible features at 72). */
const HEADER_BYTES = 104;
/** Version 3's incompatible feature bit of an external data file (the data is in another file). */
const EXTERNAL_DATA_FILE = 1n << 2n;
/** A backing name is at most 1023 bytes (qemu's limit). */
const NAME_MAX = 1023;

/** Whether `file` starts as a qcow2 image does (false too when it cannot be read). */
export async function isQcow2(file: string): Promise<boolean> {
  const handle = await open(file, 'r').catch(() => null);
  if (!handle) return false;
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await handle.read(head, 0, 4, 0);
    return bytesRead === 4 && head.readUInt32BE(0) === MAGIC;
  } finally {
    await handle.close();
  }
}

/** The info of the qcow2 image `file` from its header, or null when qemu-img must tell. */
export async function qcow2Info(file: string): Promise<DiskInfo | null> {
  const handle = await open(file, 'r');
  try {
    const stat = await handle.stat();
    const head = Buffer.alloc(Math.min(stat.size, 4096));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead < HEADER_BYTES || head.readUInt32BE(0) !== MAGIC) return null;
    const version = head.readUInt32BE(4);
    if (version !== 2 && version !== 3) return null;
    if (version === 3 && (head.readBigUInt64BE(72) & EXTERNAL_DATA_FILE) !== 0n) return null;
    const nameOffset = Number(head.readBigUInt64BE(8));
    const nameSize = head.readUInt32BE(16);
    let backingFile: string | null = null;
    if (nameOffset !== 0 && nameSize !== 0) {
      if (nameSize > NAME_MAX) return null;
      let bytes = head;
      if (nameOffset + nameSize > bytesRead) {
        bytes = Buffer.alloc(nameOffset + nameSize);
        const more = await handle.read(bytes, 0, bytes.length, 0);
        if (more.bytesRead < bytes.length) return null;
      }
      backingFile = backingNameOf(bytes.subarray(0, nameOffset + nameSize));
      if (backingFile === null || !path.isAbsolute(backingFile)) return null;
    }
    return {
      virtualSize: Number(head.readBigUInt64BE(24)),
      actualSize: stat.blocks * 512,
      backingFile,
    };
  } finally {
    await handle.close();
  }
}
