/**
 * Rewriting the backing file name of a qcow2 image while it streams from one place to another
 * (what `qemu-img rebase -u` does to a file): a volume copied into another storage pool names its
 * backing volume as that pool has it. The name lives in the image's first cluster (the header, its
 * extensions, then the name; the tables start in later clusters), so only that cluster is held
 * back and changed; every other byte passes as it came and the image keeps its length.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { HypervisorError } from './types.ts';

const MAGIC = 0x514649fb; // "QFI\xfb"
const HEADER_MIN = 24;

/** The backing file name of a qcow2 image's first bytes (null: none, or not a qcow2 image). */
export function backingNameOf(head: Buffer): string | null {
  if (head.length < HEADER_MIN || head.readUInt32BE(0) !== MAGIC) return null;
  const offset = Number(head.readBigUInt64BE(8));
  const size = head.readUInt32BE(16);
  if (offset === 0 || size === 0 || offset + size > head.length) return null;
  return head.subarray(offset, offset + size).toString('utf8');
}

/** Writes `name` as the backing file name of the first cluster `head` (in place). */
function renameBacking(head: Buffer, name: string): void {
  const offset = Number(head.readBigUInt64BE(8));
  const size = head.readUInt32BE(16);
  const bytes = Buffer.from(name, 'utf8');
  if (offset + bytes.length > head.length || bytes.length > 1023)
    throw new HypervisorError(
      'command_failed',
      `the backing name ${JSON.stringify(name)} does not fit in the image's first cluster`,
    );
  head.fill(0, offset, offset + Math.max(size, bytes.length));
  bytes.copy(head, offset);
  head.writeUInt32BE(bytes.length, 16);
}

/**
 * A stream that passes a qcow2 image through, its backing file name replaced by `rename(old)`
 * (the name unchanged when it answers the same, and images without one untouched).
 */
export function rewriteBacking(rename: (name: string) => string): Transform {
  let head: Buffer | undefined = Buffer.alloc(0);
  let clusterSize = 0;
  const release = (stream: Transform) => {
    if (!head) return;
    const first = head;
    head = undefined;
    const old = backingNameOf(first);
    if (old !== null) {
      const name = rename(old);
      if (name !== old) renameBacking(first, name);
    }
    stream.push(first);
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      if (!head) return done(null, chunk);
      head = Buffer.concat([head, chunk]);
      if (clusterSize === 0 && head.length >= HEADER_MIN) {
        const isQcow2 = head.readUInt32BE(0) === MAGIC;
        clusterSize = isQcow2 ? 2 ** head.readUInt32BE(20) : head.length;
      }
      if (clusterSize === 0 || head.length < clusterSize) return done();
      const rest = head.subarray(clusterSize);
      head = head.subarray(0, clusterSize);
      try {
        release(this);
      } catch (error) {
        return done(error as Error);
      }
      done(null, rest.length > 0 ? rest : undefined);
    },
    flush(done: TransformCallback) {
      try {
        release(this);
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
}
